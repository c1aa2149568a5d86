# One place that says how a scenert library, test and bench is built.

set(SCENERT_EXPORTED_LIBS "" CACHE INTERNAL "")

function(scenert_compile_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Wnon-virtual-dtor)
  if(SCENERT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(SCENERT_SANITIZE)
  add_compile_options(-fsanitize=${SCENERT_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${SCENERT_SANITIZE})
endif()

# scenert_precompile(<target> <header>...): with SCENERT_PCH, the target's sources start from these
# headers precompiled, parsed once per target instead of once per source (CI builds its trees so).
# Off, every source includes what it uses by itself, so a missing include still fails the build.
function(scenert_precompile target)
  if(SCENERT_PCH)
    target_precompile_headers(${target} PRIVATE ${ARGN})
    # g++ 12 reports its false -Warray-bounds on std::string copies inside system headers once they
    # are precompiled (it keeps quiet about them otherwise): printed there, not an error.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE -Wno-error=array-bounds)
    endif()
  endif()
endfunction()

# The headers of the targets that run Asio: <utility> first (Boost 1.74's coroutine support needs it
# before Asio under C++20 with g++ 12).
set(SCENERT_ASIO_PCH <utility> <boost/asio.hpp> <boost/beast/core.hpp> <boost/beast/http.hpp>
    <boost/beast/websocket.hpp>)

# scenert_add_library(<name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# declares scenert_<name>, its alias scenert::<name>, and its public include folder.
function(scenert_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target scenert_${name})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(scenert::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  scenert_compile_options(${target})
  install(TARGETS ${target} EXPORT scenertTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  set(SCENERT_EXPORTED_LIBS ${SCENERT_EXPORTED_LIBS} ${name} CACHE INTERNAL "")
endfunction()

# scenert_add_tool_library(<name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...]): a library of
# the scenert command's tools (the bots, the load test, the admin endpoint): laid out and built as
# every library, as scenert_<name> with its alias scenert::<name>; its archive is installed (for
# scenert::apps, the command line as a library) but not its headers.
function(scenert_add_tool_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  set(target scenert_${name})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(scenert::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                       PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  install(TARGETS ${target} EXPORT scenertTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  scenert_compile_options(${target})
  # As in net/: ThreadSanitizer does not model the fences Asio puts around its handlers.
  if(SCENERT_SANITIZE MATCHES "thread")
    target_compile_definitions(${target} PRIVATE BOOST_ASIO_DISABLE_FENCED_BLOCK)
  endif()
endfunction()

# scenert_add_test(<name> SOURCES ... DEPS ... [TIMEOUT s] [LABELS ...] [PCH header...]): one
# GoogleTest executable, via ctest. The label `tsan` selects what the ThreadSanitizer build runs;
# PCH names headers its sources share beyond GoogleTest's (see scenert_precompile).
function(scenert_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS;PCH" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  scenert_compile_options(${name})
  scenert_precompile(${name} <gtest/gtest.h> <gmock/gmock.h> ${ARG_PCH})
  # As in net/: ThreadSanitizer does not model the fences Asio puts around its handlers, and a test
  # may include Asio through a library's header (the bots' admin client, the HTTP server).
  if(SCENERT_SANITIZE MATCHES "thread")
    target_compile_definitions(${name} PRIVATE BOOST_ASIO_DISABLE_FENCED_BLOCK)
  endif()
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
endfunction()

# scenert_add_bench(<name> SOURCES ... DEPS ... [LIGHT args...] [LABELS ...]): a bench; LIGHT
# registers a short run in ctest so that the bench keeps building and running, labelled `bench`
# and LABELS (e.g. `cluster` for a run that needs nats-server).
function(scenert_add_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LIGHT;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  scenert_compile_options(${name})
  if(ARG_LIGHT AND SCENERT_TESTS)
    add_test(NAME ${name}.light COMMAND ${name} ${ARG_LIGHT})
    set(labels bench ${ARG_LABELS})
    set_tests_properties(${name}.light PROPERTIES TIMEOUT 120 LABELS "${labels}")
  endif()
endfunction()

function(scenert_install_package)
  include(CMakePackageConfigHelpers)
  install(EXPORT scenertTargets NAMESPACE scenert:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/scenert)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/scenertConfig.cmake.in
    ${PROJECT_BINARY_DIR}/scenertConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/scenert)
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/scenertConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/scenertConfig.cmake ${PROJECT_BINARY_DIR}/scenertConfigVersion.cmake
    ${PROJECT_SOURCE_DIR}/cmake/Findcnats.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/scenert)
endfunction()
