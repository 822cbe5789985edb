#!/usr/bin/env bash
# make-kit.sh [BUILD_DIR]: packs what a GPU run needs of this machine's build into .gpu-kit/ at
# the repository's root, for a lent GPU machine that reaches no package registry: ansor-gen and
# its measurement worker, the shared libraries of theirs that a CUDA image lacks (fmt, xgboost,
# xxhash, ...: every one but the C and C++ runtimes), and the runtime headers that candidates
# include (found at bin/../include). Name .gpu-kit in the device tool's carry; run.sh uses it.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
kit=.gpu-kit
for exe in ansor-gen ansor-measure-worker; do
  [[ -x $build/generator/$exe ]] || { echo "make-kit.sh: no $build/generator/$exe: build the generator first" >&2; exit 1; }
done
rm -rf "$kit"
mkdir -p "$kit/bin" "$kit/lib" "$kit/include"
cp "$build/generator/ansor-gen" "$build/generator/ansor-measure-worker" "$kit/bin/"
cp -r runtime/include/ansor "$kit/include/"
ldd "$kit/bin/ansor-gen" "$kit/bin/ansor-measure-worker" | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libgcc_s.so* | libstdc++.so* | ld-linux*) ;;
    *) cp -L "$lib" "$kit/lib/" ;;
  esac
done
grep -qx '/.gpu-kit/' .git/info/exclude 2>/dev/null || echo '/.gpu-kit/' >>.git/info/exclude
echo "make-kit.sh: $kit holds $(du -sh "$kit" | cut -f1): $(cd "$kit/lib" && echo *)"
