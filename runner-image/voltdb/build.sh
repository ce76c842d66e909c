#!/usr/bin/env bash
# Compiles the TPC-C stored procedures into the jar the runner's VoltDB driver loads with
# @UpdateClasses: build.sh VOLTDB_JAR OUT_JAR. Needs only a JDK and the server jar
# (org.voltdb:voltdb:10.1.1 from Maven Central): `hack/voltdb.sh procs` runs it with the
# jar `hack/voltdb.sh fetch` downloaded; an image build runs the same two steps.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 VOLTDB_JAR OUT_JAR" >&2; exit 2; }
voltdb_jar=$1 out=$2
src=$(cd "$(dirname "$0")/src" && pwd)
classes=$(mktemp -d)
tmp_jar=
trap 'rm -rf "$classes" $tmp_jar' EXIT
javac -nowarn --release 8 -cp "$voltdb_jar" -d "$classes" $(find "$src" -name '*.java')
mkdir -p "$(dirname "$out")"
tmp_jar=$(mktemp "$out.XXXXXX")
# fixed entry times: the same sources give the same jar in any clone, so the runner image built
# from it keeps its input hash and is not rebuilt (hack/images.sh)
jar --create --date=2000-01-01T00:00:00Z --file "$tmp_jar" -C "$classes" .
mv "$tmp_jar" "$out"
echo "built $out" >&2
