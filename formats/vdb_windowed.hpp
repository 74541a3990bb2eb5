#pragma once
// Internal to formats/vdb_read.cpp: reading a grid of a VDB file through a window of the file
// held in memory (vdb_windowed.cpp), the same parse as openvdb::io::File without a system call
// per leaf. Holds OpenVDB: included by the read units only.
#include <memory>
#include <string>

#include <openvdb/openvdb.h>

#include "formats/vdb_internal.hpp"

namespace hp::vdb::detail {

// Grid `name` read through `fd`, which it closes. Throws std::runtime_error (or OpenVDB's
// exceptions) when the file has no such grid, the grid is an instance, or the file ends early.
openvdb::GridBase::Ptr read_grid_windowed(int fd, const std::string& name);

// Where grid `name` lies, parsed up to its topology; null when it is absent, an instance, stored in
// half floats or its offsets do not fit the file. Reads through `fd`, which it closes.
std::shared_ptr<StoredGrid> locate_grid(int fd, const std::string& name);

// check_grid_chunks (vdb_chunks.hpp) on every grid of the file but instances, before OpenVDB's own
// reader (io::File) reads their trees. Reads through `fd`, which it closes; throws as it does.
void check_every_grid_chunks(int fd);

}  // namespace hp::vdb::detail
