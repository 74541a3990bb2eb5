# The Python package hapticprep (docs/python.md): the extension hapticprep._hapticprep, built with
# pybind11 (Debian's pybind11-dev) against Debian's python3, next to python/hapticprep/*.py in
# <build>/python/hapticprep, installed to a directory Debian's python3 imports, tested with pytest.
# Built only when pybind11 and Python 3's development files are found.
#
# The interpreter: Debian's /usr/bin/python3 unless Python3_EXECUTABLE says otherwise (a python3
# earlier on PATH, such as a pyenv one, has neither Debian's numpy nor its site directories).
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module)
set(HP_PYTHON_SKIP "")
if(NOT Python3_Interpreter_FOUND)
  set(HP_PYTHON_SKIP "no Python 3 interpreter was found (python3; or set Python3_EXECUTABLE)")
elseif(NOT Python3_Development.Module_FOUND)
  set(HP_PYTHON_SKIP "Python 3's development files were not found (python3-dev)")
else()
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 CONFIG QUIET)
  if(NOT pybind11_FOUND)
    set(HP_PYTHON_SKIP "pybind11 was not found (pybind11-dev)")
  endif()
endif()
if(HP_PYTHON_SKIP)
  message(STATUS "Python package hapticprep not built: ${HP_PYTHON_SKIP}; scripts/install-deps.sh installs it")
  return()
endif()

# The module's static libraries end up in a shared object: position-independent code, without
# semantic interposition so that calls inside the library stay direct (and inlined) as before.
set_target_properties(${HP_MODULE_TARGETS} PROPERTIES POSITION_INDEPENDENT_CODE ON)
foreach(target ${HP_MODULE_TARGETS})
  get_target_property(target_type ${target} TYPE)
  if(NOT target_type STREQUAL "INTERFACE_LIBRARY")
    target_compile_options(${target} PRIVATE -fno-semantic-interposition)
  endif()
endforeach()

set(HP_PYTHON_DIR ${CMAKE_BINARY_DIR}/python)
pybind11_add_module(hapticprep_python MODULE NO_EXTRAS python/hapticprep_module.cpp
  python/files_binding.cpp python/query_binding.cpp python/scene_binding.cpp)
target_link_libraries(hapticprep_python PRIVATE hapticprep)
set_target_properties(hapticprep_python PROPERTIES OUTPUT_NAME _hapticprep
  LIBRARY_OUTPUT_DIRECTORY ${HP_PYTHON_DIR}/hapticprep)
file(GLOB HP_PYTHON_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/python/hapticprep/*.py)
foreach(py_src ${HP_PYTHON_SOURCES})
  get_filename_component(py_name ${py_src} NAME)
  configure_file(${py_src} ${HP_PYTHON_DIR}/hapticprep/${py_name} COPYONLY)
endforeach()

# Install: Debian's python3 imports /usr/lib/python3/dist-packages (prefix /usr) and
# /usr/local/lib/python3.X/dist-packages (prefix /usr/local, the default). Another prefix: set
# PYTHONPATH=<prefix>/${HP_PYTHON_INSTALL_DIR}.
# pip install . (setup.py): scikit-build puts into the package what CMake installs below the
# package's source directory (setup.py's package_dir, python/hapticprep); anything else would go
# to the wheel's data, outside site-packages.
option(HP_PYTHON_WHEEL "Install only the Python package, where setup.py packages it (pip install .)" OFF)
if(HP_PYTHON_WHEEL)
  set(HP_PYTHON_INSTALL_DEFAULT python)
elseif(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(HP_PYTHON_INSTALL_DEFAULT lib/python3/dist-packages)
else()
  set(HP_PYTHON_INSTALL_DEFAULT lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/dist-packages)
endif()
set(HP_PYTHON_INSTALL_DIR ${HP_PYTHON_INSTALL_DEFAULT} CACHE STRING
  "Directory below the prefix for the Python package hapticprep")
install(TARGETS hapticprep_python LIBRARY DESTINATION ${HP_PYTHON_INSTALL_DIR}/hapticprep COMPONENT python)
install(FILES ${HP_PYTHON_SOURCES} DESTINATION ${HP_PYTHON_INSTALL_DIR}/hapticprep COMPONENT python)
# The modules loaded on first use (OpenVDB files; STEP and IGES) next to the extension, where
# lib/core/module.cpp looks first: copied into the build's package (a wheel made from it carries
# them) and installed with it.
foreach(loaded hapticprep_vdb hapticprep_cad)
  if(TARGET ${loaded})
    add_custom_command(TARGET ${loaded} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E make_directory ${HP_PYTHON_DIR}/hapticprep
      COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:${loaded}> ${HP_PYTHON_DIR}/hapticprep/ VERBATIM)
    install(TARGETS ${loaded} LIBRARY DESTINATION ${HP_PYTHON_INSTALL_DIR}/hapticprep COMPONENT python)
  endif()
endforeach()
# The package alone, built and installed without the executables (setup.py's install target).
add_custom_target(install-python
  COMMAND ${CMAKE_COMMAND} --install ${CMAKE_BINARY_DIR} --component python
  DEPENDS hapticprep_python VERBATIM)
message(STATUS "Python package hapticprep: built for ${Python3_EXECUTABLE}, installed to <prefix>/${HP_PYTHON_INSTALL_DIR}")
# pip install .: scikit-build builds the default target before setup.py's install target, so in
# that build the default target is the package alone (the executables, benches and libraries it
# does not link are left out; each still builds by name).
if(HP_PYTHON_WHEEL)
  get_property(hp_all_targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${hp_all_targets})
    if(NOT target STREQUAL "hapticprep_python")
      set_property(TARGET ${target} PROPERTY EXCLUDE_FROM_ALL TRUE)
    endif()
  endforeach()
endif()

if(HP_BUILD_TESTS)
  # pytest (python3-pytest) over tests/python/ (which runs examples/python/ too), against the
  # files the executables write. In the sanitizer build the extension is instrumented and Debian's
  # python3 is not: the ASan runtime must be loaded first (LD_PRELOAD of the compiler's libasan),
  # and libstdc++ with it, since python3 does not link it and ASan's interceptor of __cxa_throw
  # finds the real one only among the libraries present at start (else every C++ throw aborts).
  # Leaks off, as in make test (the interpreter keeps its own allocations to the end).
  set(HP_PYTHON_TEST_ENV "PYTHONPATH=${HP_PYTHON_DIR};HP_BIN=${CMAKE_BINARY_DIR}/bin;HP_SOURCE_DIR=${CMAKE_SOURCE_DIR};HP_PYTHON=${Python3_EXECUTABLE};MPLBACKEND=Agg;PYTHONDONTWRITEBYTECODE=1")
  if(HP_SANITIZE)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
      OUTPUT_VARIABLE HP_LIBASAN OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
      OUTPUT_VARIABLE HP_LIBSTDCXX OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND HP_PYTHON_TEST_ENV "LD_PRELOAD=${HP_LIBASAN} ${HP_LIBSTDCXX}" "ASAN_OPTIONS=detect_leaks=0")
  endif()
  add_test(NAME python.pytest
    COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${CMAKE_SOURCE_DIR}/tests/python
    WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  set_tests_properties(python.pytest PROPERTIES ENVIRONMENT "${HP_PYTHON_TEST_ENV}" TIMEOUT 900)
  # pip install of the package into a fresh virtual environment (the extension built here; the
  # sanitizer build's extension needs the ASan runtime preloaded, which a user's pip never does).
  if(NOT HP_SANITIZE)
    add_test(NAME install.pip COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install/pip_install_test.sh)
    set_tests_properties(install.pip PROPERTIES TIMEOUT 300 ENVIRONMENT
      "HP_BUILD_DIR=${CMAKE_BINARY_DIR};HP_SOURCE_DIR=${CMAKE_SOURCE_DIR};HP_PYTHON=${Python3_EXECUTABLE}")
  endif()
  # The install test imports the installed package with this interpreter.
  if(TEST install.find_package)
    set_property(TEST install.find_package APPEND PROPERTY ENVIRONMENT "HP_PYTHON=${Python3_EXECUTABLE}")
  endif()
endif()
