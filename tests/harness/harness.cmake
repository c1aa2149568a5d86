# The end-to-end tests in Python (tests/harness/scenert_harness.py). They run with Debian's
# interpreter, whose python3-protobuf matches protoc (a python3 earlier on PATH may lack it), and
# build the wire's messages from net/proto with protoc's Python output, generated here.
find_program(SCENERT_TEST_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
execute_process(COMMAND ${SCENERT_TEST_PYTHON} -c "import google.protobuf" RESULT_VARIABLE scenert_no_protobuf
                OUTPUT_QUIET ERROR_QUIET)
if(NOT scenert_no_protobuf EQUAL 0)
  message(FATAL_ERROR "${SCENERT_TEST_PYTHON} has no google.protobuf: run scripts/setup.sh (python3-protobuf)")
endif()

set(SCENERT_TEST_PROTOS ${PROJECT_BINARY_DIR}/tests/protos)
set(scenert_protos_py ${SCENERT_TEST_PROTOS}/scenert_pb2.py ${SCENERT_TEST_PROTOS}/seed002_pb2.py)
add_custom_command(OUTPUT ${scenert_protos_py}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${SCENERT_TEST_PROTOS}
  COMMAND protobuf::protoc --python_out=${SCENERT_TEST_PROTOS} -I ${PROJECT_SOURCE_DIR}/net/proto
          scenert.proto seed002.proto
  DEPENDS ${PROJECT_SOURCE_DIR}/net/proto/scenert.proto ${PROJECT_SOURCE_DIR}/net/proto/seed002.proto
  COMMENT "Python messages of net/proto for the end-to-end tests")
add_custom_target(scenert_test_protos ALL DEPENDS ${scenert_protos_py})

# scenert_add_e2e_test(<prefix> <file> CASES ... [TIMEOUT s] [LABELS ...] [ENVIRONMENT ...]): one ctest
# test <prefix>.<case> per case, running the file's test_<case> against the scenert binary.
function(scenert_add_e2e_test prefix file)
  cmake_parse_arguments(ARG "" "TIMEOUT" "CASES;LABELS;ENVIRONMENT" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  # Every case of the file is registered, and only those (checked again when the file changes).
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  file(STRINGS ${file} defined REGEX "^    def test_[a-z0-9_]+\\(self\\)")
  list(TRANSFORM defined REPLACE "^    def test_([a-z0-9_]+)\\(self\\).*" "\\1")
  set(registered ${ARG_CASES})
  list(SORT defined)
  list(SORT registered)
  if(NOT defined STREQUAL registered)
    message(FATAL_ERROR "${file}: its cases (${defined}) are not the ones registered (${registered})")
  endif()
  foreach(case ${ARG_CASES})
    add_test(NAME ${prefix}.${case}
      COMMAND ${SCENERT_TEST_PYTHON} ${file} --scenert $<TARGET_FILE:scenert> --source ${PROJECT_SOURCE_DIR}
              --work ${CMAKE_CURRENT_BINARY_DIR}/e2e --protos ${SCENERT_TEST_PROTOS} --case ${case})
    set_tests_properties(${prefix}.${case} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
    if(ARG_ENVIRONMENT)
      set_tests_properties(${prefix}.${case} PROPERTIES ENVIRONMENT "${ARG_ENVIRONMENT}")
    endif()
  endforeach()
endfunction()
