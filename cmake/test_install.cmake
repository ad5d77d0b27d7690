# Proves that an installed scaleup is usable (the ctest `install_consumer`):
#   1. `cmake --install` the build tree into a scratch prefix;
#   2. check the headers, the CMake package and scaleup.pc landed there;
#   3. `pkg-config --cflags scaleup` points at <prefix>/include and asks for C++20;
#   4. configure, build and run tests/consumer/ against the prefix with find_package(scaleup).
# Any failure ends the script with FATAL_ERROR, so `cmake -P` exits non-zero.
#
# cmake -DSCALEUP_BUILD_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=...
#       [-DSCALEUP_CONFIG=...] [-DGENERATOR=...] [-DCXX_COMPILER=...] -P test_install.cmake

cmake_minimum_required(VERSION 3.25)

foreach(var SCALEUP_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "test_install.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/consumer-build")

# Runs a command, echoing it first; stops the test if it fails.
function(run_step what)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "[install_consumer] ${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rv)
  if(NOT rv EQUAL 0)
    message(FATAL_ERROR "[install_consumer] ${what} failed (${rv})")
  endif()
endfunction()

function(expect_file path)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "[install_consumer] missing after install: ${path}")
  endif()
endfunction()

# Finds exactly one file matching the globs (searched recursively).
function(find_one out)
  file(GLOB_RECURSE found LIST_DIRECTORIES false ${ARGN})
  list(REMOVE_DUPLICATES found)
  list(LENGTH found n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "[install_consumer] expected one file matching ${ARGN}, found: ${found}")
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# 1. install
set(config_args)
if(DEFINED SCALEUP_CONFIG AND NOT SCALEUP_CONFIG STREQUAL "")
  set(config_args --config "${SCALEUP_CONFIG}")
endif()
run_step("install" "${CMAKE_COMMAND}" --install "${SCALEUP_BUILD_DIR}" --prefix "${prefix}"
         ${config_args})

# 2. what was installed
expect_file("${prefix}/include/scaleup/wire/reliability_header.hpp")
find_one(config_file "${prefix}/*/scaleupConfig.cmake")
get_filename_component(config_dir "${config_file}" DIRECTORY)
foreach(f scaleupConfigVersion.cmake scaleupTargets.cmake)
  expect_file("${config_dir}/${f}")
endforeach()
find_one(pc_file "${prefix}/*/pkgconfig/scaleup.pc")
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
message(STATUS "[install_consumer] CMake package: ${config_dir}")
message(STATUS "[install_consumer] pkg-config file: ${pc_file}")

# 3. pkg-config
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG_EXECUTABLE)
  message(FATAL_ERROR "[install_consumer] pkg-config not found")
endif()
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --cflags scaleup
                RESULT_VARIABLE rv OUTPUT_VARIABLE cflags ERROR_VARIABLE err
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rv EQUAL 0)
  message(FATAL_ERROR "[install_consumer] pkg-config --cflags scaleup failed (${rv}): ${err}")
endif()
message(STATUS "[install_consumer] pkg-config --cflags scaleup: ${cflags}")
separate_arguments(cflag_list UNIX_COMMAND "${cflags}")
if(NOT "-I${prefix}/include" IN_LIST cflag_list)
  message(FATAL_ERROR "[install_consumer] expected -I${prefix}/include in: ${cflags}")
endif()
# The headers need C++20: a consumer using only pkg-config's flags must get it.
if(NOT "-std=c++20" IN_LIST cflag_list)
  message(FATAL_ERROR "[install_consumer] expected -std=c++20 in: ${cflags}")
endif()

# 4. a consumer project
set(generator_args)
if(DEFINED GENERATOR AND NOT GENERATOR STREQUAL "")
  set(generator_args -G "${GENERATOR}")
endif()
set(compiler_args)
if(DEFINED CXX_COMPILER AND NOT CXX_COMPILER STREQUAL "")
  set(compiler_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
set(build_type Release)
if(DEFINED SCALEUP_CONFIG AND NOT SCALEUP_CONFIG STREQUAL "")
  set(build_type "${SCALEUP_CONFIG}")
endif()
run_step("configure consumer" "${CMAKE_COMMAND}"
         -S "${CONSUMER_SOURCE_DIR}" -B "${consumer_build}" ${generator_args} ${compiler_args}
         "-DCMAKE_BUILD_TYPE=${build_type}"
         "-DCMAKE_PREFIX_PATH=${prefix}"
         "-DEXPECTED_PREFIX=${prefix}"
         -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run_step("build consumer" "${CMAKE_COMMAND}" --build "${consumer_build}" --config "${build_type}")

find_one(consumer_exe "${consumer_build}/scaleup_consumer" "${consumer_build}/scaleup_consumer.exe")
run_step("run consumer" "${consumer_exe}")

message(STATUS "[install_consumer] passed")
