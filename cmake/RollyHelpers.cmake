# One helper per kind of target.
#
#   rolly_cc_library(NAME core SRCS a.cc ... [DEPS layer ...])
#       Adds one layer's sources to the one library target `rolly` (alias `rolly::rolly`). DEPS
#       names the layers this one may include; tests/layering_check.cmake holds every layer to it.
#   rolly_cc_test(NAME format_file_test SRCS file_test.cc [DEPS ...] [TIMEOUT s] [LABELS ...])
#       A GoogleTest binary registered with ctest under a timeout.
#   rolly_cc_binary(NAME rolly SRCS ... [DEPS ...])
#       A program built on the public API (tools, benchmarks, examples).
#   rolly_cc_helper(NAME rolly_format_test_util SRCS a.cc ... [DEPS ...])
#       Test code several binaries share (tests, fuzz targets and their replays), compiled once
#       as an object library; a binary takes it in its DEPS.

set(ROLLY_WARNINGS -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused
    -Woverloaded-virtual -Wpedantic -Wimplicit-fallthrough)
if(ROLLY_WERROR)
  list(APPEND ROLLY_WARNINGS -Werror)
  # GCC 12 at -O3 (the Release build) warns -Wrestrict inside libstdc++'s own std::string
  # concatenation, on code with no overlapping copy (GCC bug 105329): kept a warning there, so
  # a Release build of the tests builds.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    list(APPEND ROLLY_WARNINGS -Wno-error=restrict)
  endif()
endif()

function(rolly_apply_flags target)
  target_compile_options(${target} PRIVATE ${ROLLY_WARNINGS})
  if(ROLLY_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${ROLLY_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${ROLLY_SANITIZE})
  endif()
endfunction()

function(rolly_cc_library)
  cmake_parse_arguments(R "" "NAME" "SRCS;DEPS" ${ARGN})
  list(TRANSFORM R_SRCS PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  target_sources(rolly PRIVATE ${R_SRCS})
  list(JOIN R_DEPS "," deps)
  set_property(GLOBAL APPEND PROPERTY ROLLY_LAYER_RULES "${R_NAME}:${deps}")
endfunction()

function(rolly_cc_test)
  cmake_parse_arguments(R "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT R_TIMEOUT)
    set(R_TIMEOUT 120)
  endif()
  add_executable(${R_NAME} ${R_SRCS})
  target_link_libraries(${R_NAME} PRIVATE rolly::rolly ${R_DEPS} GTest::gmock GTest::gmock_main)
  rolly_apply_flags(${R_NAME})
  add_test(NAME ${R_NAME} COMMAND ${R_NAME} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${R_NAME} PROPERTIES TIMEOUT ${R_TIMEOUT} LABELS "${R_LABELS}")
endfunction()

function(rolly_cc_binary)
  cmake_parse_arguments(R "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${R_NAME} ${R_SRCS})
  target_link_libraries(${R_NAME} PRIVATE rolly::rolly ${R_DEPS})
  rolly_apply_flags(${R_NAME})
endfunction()

function(rolly_cc_helper)
  cmake_parse_arguments(R "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${R_NAME} OBJECT ${R_SRCS})
  target_link_libraries(${R_NAME} PUBLIC rolly::rolly ${R_DEPS})
  rolly_apply_flags(${R_NAME})
endfunction()
