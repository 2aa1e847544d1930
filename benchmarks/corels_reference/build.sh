#!/bin/sh
# Build the C++ CORELS reference for benchmarks/corels_suite.py: fetch the sources of PyPI corels 1.1.29
# (GPL; kept out of this repository), compile them with driver.cpp, print the binary's path. Then:
#   CORELS_REFERENCE=<that path> python benchmarks/corels_suite.py
set -e
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-/tmp/corels_reference}
mkdir -p "$work" && cd "$work"
if [ ! -d corels-1.1.29 ]; then
  url=$(curl -s https://pypi.org/simple/corels/ | grep -o 'https://[^"#]*corels-1.1.29.tar.gz' | head -1)
  curl -s -o corels-1.1.29.tar.gz "$url"
  tar xzf corels-1.1.29.tar.gz
fi
src=corels-1.1.29/corels/src
g++ -O3 -std=c++11 -w -I$src -I$src/corels "$here/driver.cpp" $src/corels/rulelib.cpp $src/corels/run.cpp \
  $src/corels/pmap.cpp $src/corels/utils.cpp $src/corels/corels.cpp $src/corels/cache.cpp $src/corels/time.cpp \
  -lm -o corels_ref
echo "$work/corels_ref"
