#pragma once
// Internal to formats/vdb_windowed.cpp: the walk over a grid's trees that checks, before OpenVDB
// reads the grid, every length OpenVDB's node reads trust (vdb_chunks.cpp). Holds OpenVDB.
#include <istream>

#include <openvdb/io/GridDescriptor.h>

namespace hp::vdb::detail {

// `is` stands at the start of the grid `gd` describes (a file of format 222 to 224, its framing
// walked, its stream metadata set). Walks the grid's compression flags, metadata, transform,
// topology and leaf buffers as OpenVDB 10's Archive::readGrid reads them, and checks each value
// chunk against the size of the buffer OpenVDB reads it into (the node's value count, or the count
// of its active values under mask compression): an uncompressed chunk of another length, a
// compressed chunk past the grid's end, a Blosc header whose sizes disagree with its chunk, a
// leaf's value mask in its buffer that differs from its topology's. Leaves the stream anywhere.
// Time linear in the grid's bytes, memory 64 bytes per leaf. Throws std::runtime_error naming what
// is wrong. Walks the grid types of hapticprep files only (int32, float, double and vec3s trees
// 5-4-3, stored in full precision): false, and nothing read, for another type or half floats.
bool check_grid_chunks(std::istream& is, const openvdb::io::GridDescriptor& gd);

}  // namespace hp::vdb::detail
