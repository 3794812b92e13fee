# Fails when FILE exists: what a hostile input tried to make must not be there.
if(EXISTS "${FILE}")
  message(FATAL_ERROR "${FILE} exists: a command smuggled into an input was run")
endif()
