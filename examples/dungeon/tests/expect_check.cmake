# cmake -DSERVER=... -DTABLE=... -P expect_check.cmake: `SERVER check TABLE` must exit 1 (an invalid
# table) and name each wrong parameter of the module by its JSON pointer.
execute_process(COMMAND ${SERVER} check ${TABLE} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(APPEND out "${err}")
if(NOT code EQUAL 1)
  message(FATAL_ERROR "check exited ${code}, not 1:\n${out}")
endif()
foreach(pointer "/scenes/1/module/bos_name: unknown parameter" "/scenes/1/module/damage_max: must be at least"
                "/scenes/1/module/loot/2/weight: must be an integer in 1..1000000")
  string(FIND "${out}" "${pointer}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "check did not say '${pointer}':\n${out}")
  endif()
endforeach()
message(STATUS "check refused the table, naming each wrong parameter:\n${out}")
