# ctest driver for a program with a planted bug: it must exit nonzero and print a ptxemu:
# report. Usage: cmake -DPROGRAM=<path> -P expect_finding.cmake
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with status 0 despite its out-of-bounds store")
endif()
if(NOT err MATCHES "ptxemu: ")
  message(FATAL_ERROR "${PROGRAM} printed no ptxemu: report on stderr")
endif()
if(out MATCHES "went on after")
  message(FATAL_ERROR "${PROGRAM} kept running after the finding")
endif()
