#pragma once
// Internal to the OpenCASCADE module (cad_occt.cpp): a part's shape meshed into a triangle soup,
// and the shapes grouped so that shapes sharing an edge are meshed on one thread. Includes
// OpenCASCADE: only the module's units include it.
#include <string>
#include <utility>
#include <vector>

#include <TopoDS_Shape.hxx>

#include "mesh/mesh.hpp"

namespace hp::cad_detail {

// The triangles of `shape`'s faces (meshed), in the shape's frame times `to_soup`. Nodes on an
// edge come from the edge's one discretisation, so faces meet exactly along it (seams too). A
// note names the faces that did not mesh.
TriMesh shape_soup(const TopoDS_Shape& shape, double to_soup, const std::string& part, std::vector<std::string>& notes);

// The distinct shapes (parts_of[first_part[s]] for s in 0..n-1) in groups that share no edge, each
// group's shapes in increasing order, the groups by their first: shapes of one group are meshed one
// after the other on one thread, as OpenCASCADE writes a shared edge's polygons into the edge.
std::vector<std::vector<std::size_t>> mesh_groups(const std::vector<std::pair<std::string, TopoDS_Shape>>& parts_of,
                                                  const std::vector<std::size_t>& first_part);

}  // namespace hp::cad_detail
