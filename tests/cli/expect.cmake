# Runs one ffn-lab command and checks its exit code and output.
#   -DCMD=<;-list> -DEXIT=<code> [-DSTDOUT=<regex>] [-DSTDERR=<regex>] [-DWORKDIR=<dir>]
execute_process(COMMAND ${CMD}
  WORKING_DIRECTORY ${WORKDIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL EXIT)
  message(FATAL_ERROR "exit code ${rc}, expected ${EXIT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  message(FATAL_ERROR "stdout does not match '${STDOUT}':\n${out}")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  message(FATAL_ERROR "stderr does not match '${STDERR}':\n${err}")
endif()
# Errors are one line.
if(NOT EXIT STREQUAL "0" AND NOT EXIT STREQUAL "1")
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL 1)
    message(FATAL_ERROR "expected a one-line error, got ${lines} lines:\n${err}")
  endif()
endif()
