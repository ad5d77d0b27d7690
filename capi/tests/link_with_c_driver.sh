#!/usr/bin/env bash
# A C11 program against the static library, compiled and linked by the C driver alone: no
# -lstdc++, so a reference to the C++ runtime fails the link. The archive is searched first for
# such references by name, to say which object brought one in; then the program runs.
# usage: link_with_c_driver.sh CC NM LIBSCALEUP_C_A INCLUDE_DIR OUTPUT SOURCE.c...
set -euo pipefail
cc=$1 nm=$2 lib=$3 inc=$4 exe=$5
shift 5

# __cxa_* (guards, pure virtuals, exceptions), __gxx_personality, operator new/delete (_Znw*,
# _Zna*, _Zdl*, _Zda*), std::__throw_* (_ZSt*__throw_*) and anything else of namespace std
# (_ZNSt*, _ZNKSt*, _ZSt*) that libstdc++ would have to supply.
runtime='__cxa_|__gxx_personality|_Znw|_Zna|_Zdl|_Zda|_ZSt|_ZNSt|_ZNKSt|_ZTV|_ZTI|_ZTS'
if found=$("$nm" -u -A "$lib" | grep -E "$runtime"); then
  echo "the static library needs the C++ runtime:"
  echo "$found"
  exit 1
fi

"$cc" -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" "$@" "$lib" -o "$exe"
"$exe"
