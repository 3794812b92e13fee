# Writes the C++ source of the files ffn-lab carries in its binary (the
# bundled configs and the data they name), one byte array per file, so that
# a copied or installed binary runs them from any folder (lib/io/bundle.h).
# Run at build time with -DSOURCE_DIR, -DOUTPUT and -DFILES (paths relative
# to SOURCE_DIR, separated by ';').
set(body "")
set(table "")
set(index 0)
foreach(relative IN LISTS FILES)
  file(READ ${SOURCE_DIR}/${relative} hex HEX)
  string(LENGTH "${hex}" digits)
  math(EXPR size "${digits} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND body "alignas(8) const unsigned char file${index}[] = {${bytes}0};\n")
  string(APPEND table "    {\"${relative}\", {reinterpret_cast<const char*>(file${index}), ${size}}},\n")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE ${OUTPUT}.new "// Generated at build time by cmake/bundle.cmake: the files ffn-lab carries.
#include \"io/bundle.h\"

namespace ffn::io::bundle {
namespace {
${body}}  // namespace

const BundledFile kFiles[] = {
${table}};
const std::size_t kFileCount = ${index};

}  // namespace ffn::io::bundle
")
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
