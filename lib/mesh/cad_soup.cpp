// The OpenCASCADE module's meshing of a part's shape into a soup (mesh/cad_soup.hpp).
#include "mesh/cad_soup.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include <BRep_Tool.hxx>
#include <Poly_PolygonOnTriangulation.hxx>
#include <Poly_Triangulation.hxx>
#include <TColStd_Array1OfInteger.hxx>
#include <TopExp.hxx>
#include <TopExp_Explorer.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Edge.hxx>
#include <TopoDS_Face.hxx>
#include <TopoDS_Vertex.hxx>

namespace hp::cad_detail {

TriMesh shape_soup(const TopoDS_Shape& shape, double to_soup, const std::string& part, std::vector<std::string>& notes) {
    TriMesh soup;
    TopTools_IndexedMapOfShape edges, vertices;
    TopExp::MapShapes(shape, TopAbs_EDGE, edges);
    TopExp::MapShapes(shape, TopAbs_VERTEX, vertices);
    std::map<std::pair<int, int>, std::uint32_t> shared;  // (edge index, node) or (-vertex index, 0) -> vertex
    int face_number = 0, failed = 0;
    std::string failed_faces;
    for (TopExp_Explorer fx(shape, TopAbs_FACE); fx.More(); fx.Next()) {
        ++face_number;
        const TopoDS_Face& face = TopoDS::Face(fx.Current());
        TopLoc_Location loc;
        const Handle(Poly_Triangulation) tri = BRep_Tool::Triangulation(face, loc);
        if (tri.IsNull() || tri->NbTriangles() == 0) {
            if (++failed <= 5) failed_faces += (failed > 1 ? ", " : "") + std::to_string(face_number);
            continue;
        }
        const gp_Trsf trsf = loc.Transformation();
        const int n = tri->NbNodes();
        std::vector<std::uint32_t> index(static_cast<std::size_t>(n) + 1, UINT32_MAX);
        auto place = [&](int node) {
            gp_Pnt p = tri->Node(node);
            p.Transform(trsf);
            soup.vertices.push_back({p.X() * to_soup, p.Y() * to_soup, p.Z() * to_soup});
            return static_cast<std::uint32_t>(soup.vertices.size() - 1);
        };
        auto map_node = [&](int node, std::pair<int, int> key) {
            if (node < 1 || node > n || index[static_cast<std::size_t>(node)] != UINT32_MAX) return;
            auto it = shared.find(key);
            if (it == shared.end()) it = shared.emplace(key, place(node)).first;
            index[static_cast<std::size_t>(node)] = it->second;
        };
        for (TopExp_Explorer ex(face, TopAbs_EDGE); ex.More(); ex.Next()) {
            const TopoDS_Edge& edge = TopoDS::Edge(ex.Current());
            const int e = edges.FindIndex(edge);
            TopoDS_Vertex first, last;
            TopExp::Vertices(TopoDS::Edge(edge.Oriented(TopAbs_FORWARD)), first, last);
            const int vf = first.IsNull() ? 0 : vertices.FindIndex(first), vl = last.IsNull() ? 0 : vertices.FindIndex(last);
            const bool degenerated = BRep_Tool::Degenerated(edge);
            // A seam is explored twice, forward and reversed: each gives its side's polygon.
            const Handle(Poly_PolygonOnTriangulation)& poly = BRep_Tool::PolygonOnTriangulation(edge, tri, loc);
            if (!poly.IsNull() && e > 0) {
                const TColStd_Array1OfInteger& nodes = poly->Nodes();
                const int lo = nodes.Lower(), hi = nodes.Upper();
                for (int k = lo; k <= hi; ++k) {
                    std::pair<int, int> key{e, k - lo};
                    if ((k == lo || degenerated) && vf > 0) key = {-vf, 0};
                    else if ((k == hi || degenerated) && vl > 0) key = {-vl, 0};
                    map_node(nodes.Value(k), key);
                }
            }
        }
        for (int i = 1; i <= n; ++i)
            if (index[static_cast<std::size_t>(i)] == UINT32_MAX) index[static_cast<std::size_t>(i)] = place(i);
        const bool reversed = face.Orientation() == TopAbs_REVERSED;
        for (int t = 1; t <= tri->NbTriangles(); ++t) {
            int a = 0, b = 0, c = 0;
            tri->Triangle(t).Get(a, b, c);
            if (a < 1 || a > n || b < 1 || b > n || c < 1 || c > n) continue;
            if (reversed) std::swap(b, c);
            soup.triangles.push_back({index[static_cast<std::size_t>(a)], index[static_cast<std::size_t>(b)],
                                      index[static_cast<std::size_t>(c)]});
        }
    }
    if (failed > 0)
        notes.push_back("part '" + part + "': " + std::to_string(failed) + " of " + std::to_string(face_number) +
                        " faces did not mesh (face " + failed_faces + (failed > 5 ? ", ..." : "") +
                        " in the order OpenCASCADE gives the part's faces); they leave holes, so the part is an open mesh");
    return soup;
}

std::vector<std::vector<std::size_t>> mesh_groups(const std::vector<std::pair<std::string, TopoDS_Shape>>& parts_of,
                                                  const std::vector<std::size_t>& first_part) {
    std::vector<std::size_t> root(first_part.size());
    for (std::size_t s = 0; s < root.size(); ++s) root[s] = s;
    auto find = [&](std::size_t s) {
        while (root[s] != s) s = root[s] = root[root[s]];
        return s;
    };
    std::map<const void*, std::size_t> shape_of_edge;  // TEdge -> the first shape holding it
    for (std::size_t s = 0; s < first_part.size(); ++s)
        for (TopExp_Explorer ex(parts_of[first_part[s]].second, TopAbs_EDGE); ex.More(); ex.Next()) {
            const auto [it, fresh] = shape_of_edge.emplace(ex.Current().TShape().get(), s);
            if (fresh) continue;
            const std::size_t a = find(it->second), b = find(s);
            root[std::max(a, b)] = std::min(a, b);
        }
    std::vector<std::vector<std::size_t>> groups;
    std::vector<std::size_t> group_of(first_part.size());
    for (std::size_t s = 0; s < first_part.size(); ++s) {
        const std::size_t r = find(s);
        if (r == s) {
            group_of[s] = groups.size();
            groups.emplace_back();
        }
        groups[group_of[r]].push_back(s);
    }
    return groups;
}

}  // namespace hp::cad_detail
