# Turns a file into a C array at build time (the viewer's page in the
# binary: no files to install, no CDN). Run as
#   cmake -DIN=page.html -DOUT=page.c -DNAME=knut_cli_web_page -P embed.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE ${OUT} "/* Generated from ${IN} by cmake/embed.cmake: do not edit. */\n#include <stddef.h>\n"
  "const unsigned char ${NAME}[] = {\n${body}0x00};\nconst size_t ${NAME}_len = ${len};\n")
