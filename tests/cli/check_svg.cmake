# Checks an SVG written by `sweep --plot`: an XML declaration and one <svg>
# root that closes at the end, balanced <g> groups, and exactly COUNT legend
# labels matching PATTERN (one per plotted series).
#   -DSVG=<file> -DPATTERN=<regex> -DCOUNT=<n>
if(NOT EXISTS "${SVG}")
  message(FATAL_ERROR "${SVG} was not written")
endif()
file(READ "${SVG}" text)
if(NOT text MATCHES "^<\\?xml" OR NOT text MATCHES "<svg[^>]*>" OR NOT text MATCHES "</svg>[ \n]*$")
  message(FATAL_ERROR "${SVG}: not a complete SVG document")
endif()
string(REGEX MATCHALL "<g[ >]" opened "${text}")
string(REGEX MATCHALL "</g>" closed "${text}")
list(LENGTH opened n_open)
list(LENGTH closed n_close)
if(NOT n_open EQUAL n_close)
  message(FATAL_ERROR "${SVG}: ${n_open} <g> against ${n_close} </g>")
endif()
string(REGEX MATCHALL "${PATTERN}" series "${text}")
list(LENGTH series n)
if(NOT n EQUAL COUNT)
  message(FATAL_ERROR "${SVG}: ${n} series match '${PATTERN}', expected ${COUNT}")
endif()
