# Writes build_info.h at every build (not only at configure time), so the git
# commit a manifest records is the one the binary was built from. The file is
# rewritten only when its content changes, to keep rebuilds incremental.
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE FFNLAB_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
if(FFNLAB_GIT_COMMIT AND dirty)
  string(APPEND FFNLAB_GIT_COMMIT "-dirty")
endif()
configure_file(${TEMPLATE} ${OUTPUT}.new @ONLY)
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
