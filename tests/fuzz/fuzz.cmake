# tests/fuzz: the fuzz entries of every reader (docs/fuzzing.md).
#
# The entries are compiled into four libraries by the readers they need (container formats, VDB,
# JSON, meshes). Every build links them into hp_fuzz_replay, which `make test` runs over the kept
# corpus and the regression inputs of each target (ctest fuzz.replay.<target>). With -DHP_FUZZ=ON
# (clang, `make fuzz`: scripts/fuzz.sh) each target also gets a libFuzzer binary fuzz_<target>,
# and each of our formats a canary binary fuzz_canary_<target> whose reader is compiled with
# HP_FUZZ_CANARY (a planted bug the fuzzer must find).
set(HP_FUZZ_DIR ${CMAKE_SOURCE_DIR}/tests/fuzz)
set(HP_FUZZ_GROUPS container vdb text mesh)
if(TARGET hp_bullet)
  list(APPEND HP_FUZZ_GROUPS bullet)
endif()
set(HP_FUZZ_TARGETS_container hps hcfm hoct hsmp)
set(HP_FUZZ_TARGETS_vdb vdb_field vdb_shell_field vdb_gradient)
set(HP_FUZZ_TARGETS_text pipeline manifest poses scene)
set(HP_FUZZ_TARGETS_bullet bullet_scene hacd_cache)
set(HP_FUZZ_TARGETS_mesh mesh_obj mesh_stl mesh_ply mesh_off mesh_gltf mesh_glb mesh_dae mesh_3mf)
# STEP and IGES: through the same import call, with the OpenCASCADE module of this build.
if(TARGET hapticprep_cad)
  list(APPEND HP_FUZZ_TARGETS_mesh step iges)
endif()
set(HP_FUZZ_LIBS_container hp_formats_shell hp_formats_cfm hp_formats_octree hp_formats_sampler)
set(HP_FUZZ_LIBS_vdb hp_query hp_pipeline hp_pointshell hp_formats_vdb)
set(HP_FUZZ_LIBS_text hp_pipeline hp_scene hp_query)
set(HP_FUZZ_LIBS_mesh hp_mesh)
set(HP_FUZZ_LIBS_bullet hp_bullet PkgConfig::BULLET)
# The reader a canary binary compiles with the planted bug (HP_FUZZ_CANARY), per target of our
# formats and JSON files. Only the fuzz_canary_<target> binaries define it; the libraries never do
# (ctest fuzz.canary_absent.<target>, below, shows it for the release and sanitized builds).
set(HP_FUZZ_CANARY_hps formats/shell.cpp)
set(HP_FUZZ_CANARY_hcfm formats/cfm.cpp)
set(HP_FUZZ_CANARY_hoct formats/octree.cpp)
set(HP_FUZZ_CANARY_hsmp formats/sampler.cpp)
set(HP_FUZZ_CANARY_vdb_field formats/vdb_integrity.cpp)
set(HP_FUZZ_CANARY_vdb_shell_field formats/vdb_integrity.cpp)
set(HP_FUZZ_CANARY_vdb_gradient formats/vdb_integrity.cpp)
set(HP_FUZZ_CANARY_pipeline lib/pipeline/stage.cpp)
set(HP_FUZZ_CANARY_manifest lib/pipeline/manifest.cpp)
set(HP_FUZZ_CANARY_poses lib/query/scenario.cpp)
set(HP_FUZZ_CANARY_scene lib/scene/scene_file.cpp)
set(HP_FUZZ_CANARY_bullet_scene lib/bullet/scene.cpp)
set(HP_FUZZ_CANARY_hacd_cache lib/bullet/hacd.cpp)
# The mesh import layer: one canary per format, next to the check of that format's bytes (or, for
# OBJ and STL, of the vertices Assimp returns).
set(HP_FUZZ_CANARY_mesh_obj lib/mesh/mesh.cpp)
set(HP_FUZZ_CANARY_mesh_stl lib/mesh/mesh.cpp)
set(HP_FUZZ_CANARY_mesh_gltf lib/mesh/gltf_check.cpp)
set(HP_FUZZ_CANARY_mesh_dae lib/mesh/collada_check.cpp)
foreach(target mesh_ply mesh_off mesh_glb mesh_3mf)
  set(HP_FUZZ_CANARY_${target} lib/mesh/import.cpp)
endforeach()
# STEP and IGES: in the OpenCASCADE module (lib/mesh/cad_occt.cpp), which the fuzz_canary_ binaries
# of this file cannot replace; scripts/fuzz_light.py canary builds the module with it.
set(HP_FUZZ_CANARY_step lib/mesh/cad_occt.cpp)
set(HP_FUZZ_CANARY_iges lib/mesh/cad_occt.cpp)

add_library(hp_fuzz_support STATIC ${HP_FUZZ_DIR}/fuzz_support.cpp)
target_include_directories(hp_fuzz_support PUBLIC ${HP_FUZZ_DIR})
target_link_libraries(hp_fuzz_support PUBLIC hp_core)
set(HP_FUZZ_ALL_TARGETS)
foreach(group ${HP_FUZZ_GROUPS})
  add_library(hp_fuzz_${group} STATIC ${HP_FUZZ_DIR}/targets_${group}.cpp)
  target_link_libraries(hp_fuzz_${group} PUBLIC hp_fuzz_support ${HP_FUZZ_LIBS_${group}})
  list(APPEND HP_FUZZ_ALL_TARGETS ${HP_FUZZ_TARGETS_${group}})
endforeach()

add_executable(hp_fuzz_replay ${HP_FUZZ_DIR}/replay_main.cpp)
foreach(group ${HP_FUZZ_GROUPS})
  target_link_libraries(hp_fuzz_replay PRIVATE hp_fuzz_${group})
endforeach()
if(TARGET hp_bullet)
  target_compile_definitions(hp_fuzz_replay PRIVATE HP_FUZZ_HAVE_BULLET=1)
endif()
set_target_properties(hp_fuzz_replay PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
if(TARGET hapticprep_cad)
  add_dependencies(hp_fuzz_replay hapticprep_cad)
endif()

if(HP_BUILD_TESTS)
  foreach(target ${HP_FUZZ_ALL_TARGETS})
    add_test(NAME fuzz.replay.${target}
             COMMAND hp_fuzz_replay ${target} ${HP_FUZZ_DIR}/corpus/${target} ${HP_FUZZ_DIR}/regressions/${target})
    set_tests_properties(fuzz.replay.${target} PROPERTIES TIMEOUT 120)
    # The seeds every fuzz run starts from read without a refusal: from them the fuzzer reaches
    # the parsers behind the gate (docs/fuzzing.md, "Seeds").
    if(IS_DIRECTORY ${HP_FUZZ_DIR}/seeds/${target})
      add_test(NAME fuzz.seeds.${target} COMMAND hp_fuzz_replay --must-read ${target} ${HP_FUZZ_DIR}/seeds/${target})
      set_tests_properties(fuzz.seeds.${target} PROPERTIES TIMEOUT 60)
    endif()
  endforeach()
  # A hang on a kept STEP or IGES input shows as a timeout well before the others' (each input
  # takes well under a second; docs/fuzzing.md).
  if(TARGET hapticprep_cad)
    set_tests_properties(fuzz.replay.step fuzz.replay.iges PROPERTIES TIMEOUT 60)
  endif()
endif()

# The inputs that set off each canary (tests/fuzz/canaries/<target>/, found by its fuzz_canary_
# binary): the reader refuses them with hp::Error, and a build with a canary compiled in would die
# of the trap instead. So the release and sanitized builds show that no canary is in them.
if(HP_BUILD_TESTS)
  foreach(target ${HP_FUZZ_ALL_TARGETS})
    if(HP_FUZZ_CANARY_${target} AND IS_DIRECTORY ${HP_FUZZ_DIR}/canaries/${target})
      add_test(NAME fuzz.canary_absent.${target} COMMAND hp_fuzz_replay ${target} ${HP_FUZZ_DIR}/canaries/${target})
      set_tests_properties(fuzz.canary_absent.${target} PROPERTIES TIMEOUT 60)
    endif()
  endforeach()
endif()

# Inputs on which OpenVDB (not instrumented, not ours to fix) allocates a damaged compressed chunk's
# stored length before it reads the chunk (formats/vdb.md, "How a grid is read"). The allocation
# fails (bad_alloc, which the reader turns into exit 3) or is address space that our stream never
# fills; the test keeps that defence. AddressSanitizer aborts on any failed operator new, so the
# sanitized builds do not run it.
if(HP_BUILD_TESTS AND NOT HP_SANITIZE)
  add_test(NAME fuzz.openvdb_limits COMMAND hp_fuzz_replay vdb_field ${HP_FUZZ_DIR}/openvdb-limits/vdb_field)
  set_tests_properties(fuzz.openvdb_limits PROPERTIES TIMEOUT 120)
endif()

# Every clang build (the fuzz build among them): clang does not
# honour GCC's "#pragma GCC target(avx)" around the AVX paths of the winding number, so those units
# are compiled for AVX as a whole.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set_source_files_properties(${CMAKE_SOURCE_DIR}/lib/geometry/winding.cpp ${CMAKE_SOURCE_DIR}/lib/mesh/orient.cpp
                              PROPERTIES COMPILE_OPTIONS -mavx)
  # clang 14 leaves the dispatcher of a member function with target_clones undefined at link time:
  # in the fuzz build those functions are compiled once, for the default target.
  file(GLOB HP_FUZZ_CLONED ${CMAKE_SOURCE_DIR}/lib/*/*.cpp)
  foreach(source ${HP_FUZZ_CLONED})
    file(READ ${source} text)
    if(text MATCHES "target_clones")
      set_property(SOURCE ${source} APPEND PROPERTY COMPILE_OPTIONS "-Dtarget_clones(...)=unused")
    endif()
  endforeach()
endif()

if(HP_FUZZ)
  # The OpenCASCADE module, instrumented as the library, leaves the sanitizers' and libFuzzer's
  # symbols to the executable that loads it: they are resolved at dlopen, not at link time, and the
  # fuzz binaries export theirs (-rdynamic below).
  if(TARGET hapticprep_cad)
    set_property(TARGET hapticprep_cad PROPERTY LINK_OPTIONS -Wl,--exclude-libs,ALL)
  endif()
  foreach(group ${HP_FUZZ_GROUPS})
    foreach(target ${HP_FUZZ_TARGETS_${group}})
      add_executable(fuzz_${target} ${HP_FUZZ_DIR}/fuzz_main.cpp)
      target_compile_definitions(fuzz_${target} PRIVATE HP_FUZZ_ENTRY=${target})
      if(group STREQUAL "vdb")
        target_compile_definitions(fuzz_${target} PRIVATE HP_FUZZ_VDB_MUTATOR=1)
      endif()
      target_link_libraries(fuzz_${target} PRIVATE hp_fuzz_${group})
      target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer)
      set_target_properties(fuzz_${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
      if(target STREQUAL "step" OR target STREQUAL "iges")
        add_dependencies(fuzz_${target} hapticprep_cad)
        target_link_options(fuzz_${target} PRIVATE -rdynamic)
      endif()
      if(HP_FUZZ_CANARY_${target} AND NOT HP_FUZZ_CANARY_${target} STREQUAL "lib/mesh/cad_occt.cpp")
        # The canary's reader object comes first on the link line, so the library's copy of it is
        # never pulled in.
        add_executable(fuzz_canary_${target} ${HP_FUZZ_DIR}/fuzz_main.cpp ${CMAKE_SOURCE_DIR}/${HP_FUZZ_CANARY_${target}})
        target_compile_definitions(fuzz_canary_${target} PRIVATE HP_FUZZ_ENTRY=${target} HP_FUZZ_CANARY=1)
        if(group STREQUAL "vdb")
          target_compile_definitions(fuzz_canary_${target} PRIVATE HP_FUZZ_VDB_MUTATOR=1)
        endif()
        target_link_libraries(fuzz_canary_${target} PRIVATE hp_fuzz_${group})
        if(HP_FUZZ_CANARY_${target} MATCHES "^formats/vdb")
          target_link_libraries(fuzz_canary_${target} PRIVATE OpenVDB::openvdb)
        elseif(HP_FUZZ_CANARY_${target} MATCHES "^lib/mesh")
          target_link_libraries(fuzz_canary_${target} PRIVATE assimp::assimp ZLIB::ZLIB)
        endif()
        target_link_options(fuzz_canary_${target} PRIVATE -fsanitize=fuzzer)
        set_target_properties(fuzz_canary_${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
      endif()
    endforeach()
  endforeach()
endif()
