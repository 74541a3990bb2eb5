# Probes of the layering (tests/layers/upward_include_test.sh): each compiles tests/layers/probe.cpp
# with the include roots of one module and one header. "fails": the header belongs to a module
# that is not below, so the compiler must report it as not found; "compiles": the same module
# with a header it may include, so that a failure above cannot come from a broken probe.
# Built only by the test (EXCLUDE_FROM_ALL); the list the test reads is layer_probes.txt.
set(HP_LAYER_PROBES
  # an upward include from geometry and the former cycle between geometry and mesh
  "geometry|contact/query.hpp|fails"
  "geometry|query/session.hpp|fails"
  "geometry|mesh/mesh.hpp|compiles"
  "mesh|geometry/bvh.hpp|fails"
  "mesh|math/vec.hpp|compiles"
  # the pointshell reads the distance sampler below it; its file format and the VDB files of its
  # input (read by the pipeline's stage) sit above it
  "pointshell|formats/shell.hpp|fails"
  "pointshell|formats/vdb.hpp|fails"
  "pointshell|spheretree/tree.hpp|fails"
  "pointshell|field/field.hpp|compiles"
  # the sampler knows no stage that uses it
  "field|pointshell/pointshell.hpp|fails"
  "field|voxel/grid.hpp|compiles"
  # the hot kernel does no file I/O and no timing
  "contact|formats/vdb.hpp|fails"
  "contact|query/timing.hpp|fails"
  "contact|cfm/cfm.hpp|compiles"
  # a format above the stages it stores
  "formats_vdb|distance/distance.hpp|fails"
  "formats_vdb|voxel/voxelize.hpp|compiles"
  # the octree does no file I/O and knows no field; its file format sits above it
  "octree|formats/octree.hpp|fails"
  "octree|field/field.hpp|fails"
  "octree|spheretree/miniball.hpp|compiles")
if(TARGET hp_bullet)
  # Bullet's module sits above the query; nothing else sees it
  list(APPEND HP_LAYER_PROBES "query|bullet/vps.hpp|fails" "pipeline|bullet/vps.hpp|fails"
       "bullet|query/session.hpp|compiles")
endif()
set(HP_LAYER_PROBE_LIST "")
set(probe_index 0)
foreach(probe ${HP_LAYER_PROBES})
  string(REPLACE "|" ";" fields "${probe}")
  list(GET fields 0 probe_module)
  list(GET fields 1 probe_header)
  list(GET fields 2 probe_expect)
  math(EXPR probe_index "${probe_index} + 1")
  set(probe_target hp_layer_probe_${probe_index})
  add_library(${probe_target} OBJECT EXCLUDE_FROM_ALL ${CMAKE_SOURCE_DIR}/tests/layers/probe.cpp)
  target_link_libraries(${probe_target} PRIVATE hp_${probe_module})
  target_compile_definitions(${probe_target} PRIVATE HP_PROBE_HEADER="${probe_header}")
  string(APPEND HP_LAYER_PROBE_LIST "${probe_target} ${probe_module} ${probe_header} ${probe_expect}\n")
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/layer_probes.txt "${HP_LAYER_PROBE_LIST}")
