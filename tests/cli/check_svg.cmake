# Checks an SVG written by `sweep --plot`: an XML declaration and one <svg>
# root that closes at the end, balanced <g> groups, and exactly COUNT legend
# labels matching PATTERN (one per plotted series); and the PNG beside it
# (the same name, .png): a PNG signature, 1600 x 1000, at least 20 kB.
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
string(REGEX REPLACE "\\.svg$" ".png" png "${SVG}")
if(NOT EXISTS "${png}")
  message(FATAL_ERROR "${png} was not written beside ${SVG}")
endif()
file(READ "${png}" signature LIMIT 8 HEX)
if(NOT signature STREQUAL "89504e470d0a1a0a")
  message(FATAL_ERROR "${png}: not a PNG file (starts ${signature})")
endif()
# The PNG is for slides: 1600 x 1000 (IHDR's width and height, bytes 16-23),
# and more than a blank frame (an empty 1600 x 1000 plot compresses to a few
# kilobytes; every figure here draws at least 20).
file(READ "${png}" ihdr OFFSET 16 LIMIT 8 HEX)
if(NOT ihdr STREQUAL "00000640000003e8")
  message(FATAL_ERROR "${png}: not 1600 x 1000 (IHDR width and height ${ihdr})")
endif()
file(SIZE "${png}" bytes)
if(bytes LESS 20000)
  message(FATAL_ERROR "${png}: ${bytes} bytes, too small for a drawn figure")
endif()
