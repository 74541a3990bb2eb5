# The library's modules: one CMake library per module, each linking only the modules below it.
#
#   hp_module(<name> (DIR lib/<name> | FILES <glob>...) [DEPENDS <module or imported target>...]
#             [PRIVATE <imported target>...])
#
# creates the target hp_<name> (static, or INTERFACE when the module has no .cpp file) from the
# module's sources, globbed so that a new file in the module needs no edit here. The module's
# headers are reachable through an include root of its own, ${CMAKE_BINARY_DIR}/modules/<name>,
# which holds only them (a symbolic link to lib/<name>, or one link per header for a module that
# shares formats/ with others). target_link_libraries passes the roots of the modules below to a
# module's sources; neither lib/ nor the repository root is an include directory. So an include
# of a module that is not below, e.g. "query/session.hpp" in lib/geometry, fails to compile:
# "query/session.hpp: No such file or directory".
#
# DEPENDS: the modules a module's sources include (by name, without hp_) and the libraries its
# headers need; PRIVATE: libraries only its sources use (OpenVDB, assimp, libpng). The graph is
# drawn in docs/architecture.md; hp_check_modules() fails the configure step when a directory of
# lib/ or a source of formats/ belongs to no module.
set(HP_MODULE_ROOT ${CMAKE_BINARY_DIR}/modules)
file(REMOVE_RECURSE ${HP_MODULE_ROOT})  # links only: removing them never touches the sources
set_property(GLOBAL PROPERTY HP_MODULES "")
set_property(GLOBAL PROPERTY HP_MODULE_FILES "")

function(hp_module name)
  cmake_parse_arguments(M "" "DIR" "FILES;DEPENDS;PRIVATE" ${ARGN})
  set(root ${HP_MODULE_ROOT}/${name})
  file(MAKE_DIRECTORY ${root})
  if(M_DIR)
    file(GLOB files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${M_DIR}/*.cpp ${CMAKE_SOURCE_DIR}/${M_DIR}/*.hpp)
    get_filename_component(dir_name ${M_DIR} NAME)
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${M_DIR} ${root}/${dir_name} SYMBOLIC)
  else()
    set(files)
    foreach(pattern ${M_FILES})
      file(GLOB matched CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${pattern})
      list(APPEND files ${matched})
    endforeach()
    foreach(file ${files})
      if(file MATCHES "\\.hpp$")
        file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${file})
        get_filename_component(rel_dir ${rel} DIRECTORY)
        file(MAKE_DIRECTORY ${root}/${rel_dir})
        file(CREATE_LINK ${file} ${root}/${rel} SYMBOLIC)
      endif()
    endforeach()
  endif()
  if(NOT files)
    message(FATAL_ERROR "module ${name}: no source or header found (${M_DIR}${M_FILES})")
  endif()
  set_property(GLOBAL APPEND PROPERTY HP_MODULE_FILES ${files})
  set_property(GLOBAL APPEND PROPERTY HP_MODULES ${name})

  set(sources ${files})
  list(FILTER sources INCLUDE REGEX "\\.cpp$")
  set(deps)
  foreach(dep ${M_DEPENDS})
    if(dep MATCHES "::")
      list(APPEND deps ${dep})
    elseif(TARGET hp_${dep})
      list(APPEND deps hp_${dep})
    else()
      message(FATAL_ERROR "module ${name} depends on '${dep}', which is not a module defined before it")
    endif()
  endforeach()
  if(sources)
    add_library(hp_${name} STATIC ${sources})
    target_include_directories(hp_${name} PUBLIC $<BUILD_INTERFACE:${root}>)
    target_link_libraries(hp_${name} PUBLIC ${deps} PRIVATE ${M_PRIVATE})
    set_target_properties(hp_${name} PROPERTIES OUTPUT_NAME hapticprep_${name})
  else()
    add_library(hp_${name} INTERFACE)
    target_include_directories(hp_${name} INTERFACE $<BUILD_INTERFACE:${root}>)
    target_link_libraries(hp_${name} INTERFACE ${deps})
  endif()
  target_compile_features(hp_${name} INTERFACE cxx_std_20)
  set_target_properties(hp_${name} PROPERTIES EXPORT_NAME ${name})
  set_property(TARGET hp_${name} PROPERTY HP_MODULE_DEPENDS ${M_DEPENDS})
endfunction()

# Every directory of lib/ is a module, and every source and header of formats/ belongs to one.
function(hp_check_modules)
  get_property(claimed GLOBAL PROPERTY HP_MODULE_FILES)
  file(GLOB lib_dirs LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/lib/*)
  foreach(dir ${lib_dirs})
    file(GLOB dir_files ${dir}/*.cpp ${dir}/*.hpp)
    foreach(file ${dir_files})
      if(NOT file IN_LIST claimed)
        file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${file})
        get_filename_component(rel_dir ${rel} DIRECTORY)
        message(FATAL_ERROR "${rel} belongs to no module: add hp_module(... DIR ${rel_dir}) for its "
                            "directory to CMakeLists.txt, with the modules it includes as DEPENDS")
      endif()
    endforeach()
  endforeach()
  file(GLOB format_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/formats/*.cpp ${CMAKE_SOURCE_DIR}/formats/*.hpp)
  foreach(file ${format_files})
    if(NOT file IN_LIST claimed)
      file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${file})
      message(FATAL_ERROR "${rel} belongs to no module: name it after a formats module "
                          "(formats/<module>*.cpp, e.g. formats/vdb_read.cpp) or add a formats module "
                          "to CMakeLists.txt")
    endif()
  endforeach()
endfunction()

# Writes the graph, one module a line, bottom first: "<module>: <the modules it depends on>"
# (tests/layers/architecture_doc_test.sh compares it with docs/architecture.md).
function(hp_write_module_graph file)
  get_property(modules GLOBAL PROPERTY HP_MODULES)
  set(text "")
  foreach(module ${modules})
    get_property(deps TARGET hp_${module} PROPERTY HP_MODULE_DEPENDS)
    list(FILTER deps EXCLUDE REGEX "::")
    list(JOIN deps " " deps_text)
    string(APPEND text "${module}: ${deps_text}\n")
  endforeach()
  file(WRITE ${file} "${text}")
endfunction()
