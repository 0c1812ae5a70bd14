#!/usr/bin/env bash
# Builds the files of a satoken image from what this machine has, for Jib to lay on an empty ("scratch")
# base: a Java runtime jlink'd from the build JDK, the shared libraries that runtime and the other programs
# load (copied from this machine), dash as /bin/sh for the launcher and, for the agent, util-linux's mount
# and umount. No base image is pulled: none can be here.
#
#   build-rootfs.sh OUT PROGRAM MAIN_CLASS [--classpath JARS] [--modules LIST] [--mount] [--no-runtime]
#                   [--sbom FILE] [--sbom-out DIR]
#
#   OUT           the directory to fill (emptied first); Jib adds it to the image as one layer
#   PROGRAM       the launcher's name, put in /usr/local/bin (satoken-agent, satoken-controlplane)
#   MAIN_CLASS    the class the launcher runs, on the classpath Jib writes to /app/jib-classpath-file
#   --classpath   the program's jars, colon-separated: the libraries that the native code inside them loads
#                 (META-INF/native, such as netty's epoll transport in grpc-netty-shaded, and JNA's
#                 com/sun/jna/<os-arch>/libjnidispatch.so) are added too
#   --modules     the JDK modules of the runtime, comma-separated (default: the list below, which the
#                 control plane uses); the agent names its own, smaller list in its pom
#   --mount       add mount and umount (the agent mounts each token volume's tmpfs)
#   --no-runtime  only the launcher: for a base image that has a shell, a JRE at /opt/java/openjdk and
#                 mount, such as eclipse-temurin:17-jre (docs/install.md, "Images", tells how)
#   --sbom        the program's CycloneDX SBOM (the jar and its libraries, which Jib puts under /app), copied
#                 into the image as /usr/share/satoken/sbom/PROGRAM.cdx.json
#   --sbom-out    a directory to put a copy of the image's Debian SBOM in (PROGRAM-image-debian.cdx.json), next
#                 to the image archive
#
# Every file copied from this machine is recorded with the Debian package it came from (dpkg-query -S), so
# that scanners and people can tell what the image holds:
#   /usr/share/satoken/debian-packages.txt             each copied file, its package, version and architecture
#   /usr/share/satoken/sbom/PROGRAM-debian.cdx.json    those packages as a CycloneDX SBOM (purl pkg:deb/...)
#   /var/lib/dpkg/status.d/PACKAGE                     one dpkg status stanza per package, where image scanners
#                                                      (Trivy, Syft/Grype) look in distroless-style images
#
# JAVA_HOME names the JDK to jlink; its jmods/ must exist (Debian: openjdk-17-jmods).
set -euo pipefail

out=$1 program=$2 main_class=$3
shift 3
with_mount=false runtime=true classpath= sbom= sbom_out= modules=
while [ $# -gt 0 ]; do
  case $1 in
    --classpath) classpath=$2; shift ;;
    --modules) modules=$2; shift ;;
    --mount) with_mount=true ;;
    --no-runtime) runtime=false ;;
    --sbom) sbom=$2; shift ;;
    --sbom-out) sbom_out=$2; shift ;;
    *) echo "build-rootfs.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

java_home=/opt/java/openjdk
# What the jars use (jdeps --print-module-deps on the shaded jars), plus what nothing names statically:
# jdk.crypto.ec, the provider of the EC keys in TLS and JWTs.
modules=${modules:-java.base,java.compiler,java.desktop,java.logging,java.management,java.naming,java.sql,jdk.crypto.ec,jdk.jfr,jdk.management,jdk.unsupported}
# java.desktop is there for java.beans (SnakeYAML's introspection). Its window, font, image and sound
# libraries are never loaded by a headless server, and they would bring X11 and more into the image.
unused_natives=libawt_xawt.so,libsplashscreen.so,libjsound.so,libfontmanager.so,libjavajpeg.so,liblcms.so,libmlib_image.so,libjawt.so

rm -rf "$out"
mkdir -p "$out/usr/local/bin"
# what was copied from this machine: "IMAGE_PATH<TAB>HOST_PATH" lines, for the package list at the end
copied=$(mktemp)
trap 'rm -f "$copied"' EXIT

# Copies each library FILE loads to the same path under $out. Jib copies what a symbolic link points to,
# so the copies are files; LD_LIBRARY_PATH lets ldd find the runtime's own libraries.
copy_libraries() {
  local lib
  for lib in $(LD_LIBRARY_PATH="$out$java_home/lib:$out$java_home/lib/server" ldd "$1" 2>/dev/null \
      | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    case $lib in "$out"/*) continue ;; esac
    if [ ! -e "$out$lib" ]; then
      mkdir -p "$out$(dirname "$lib")"
      cp -L "$lib" "$out$lib"
      printf '%s\t%s\n' "$lib" "$lib" >> "$copied"
    fi
  done
}

copy_program() { # copies a program from this machine to PATH under $out, with its libraries
  mkdir -p "$out$(dirname "$2")"
  cp -L "$1" "$out$2"
  printf '%s\t%s\n' "$2" "$1" >> "$copied"
  copy_libraries "$1"
}

if $runtime; then
  jdk=${JAVA_HOME:?JAVA_HOME must name the JDK to jlink}
  if [ ! -d "$jdk/jmods" ]; then
    echo "build-rootfs.sh: $jdk/jmods not found; install the JDK's jmods (Debian: openjdk-17-jmods)" >&2
    exit 2
  fi
  "$jdk/bin/jlink" --add-modules "$modules" --strip-debug --no-header-files --no-man-pages --compress=2 \
    --exclude-files="$(echo "$unused_natives" | sed 's|\([^,]*\)|**/\1|g')" --output "$out$java_home"
  # The JDK's java.security names twelve providers. One whose module is not in this runtime is looked for,
  # at its turn, by a ServiceLoader scan of the class path, which instantiates every provider found there:
  # BouncyCastle's (about 420 classes at each start; BENCHMARKS.md, "Agent footprint"). Only the providers
  # this runtime holds stay listed, renumbered in their order; the others could not load anyway.
  security_file=$out$java_home/conf/security/java.security
  awk -v modules=",$modules," '
    /^security\.provider\.[0-9]+=/ {
      name = substr($0, index($0, "=") + 1)
      module = "java.base"
      if (name == "SunEC") module = "jdk.crypto.ec"
      else if (name == "SunJGSS") module = "java.security.jgss"
      else if (name == "SunSASL") module = "java.security.sasl"
      else if (name == "XMLDSig") module = "java.xml.crypto"
      else if (name == "SunPCSC") module = "java.smartcardio"
      else if (name == "JdkLDAP") module = "java.naming"
      else if (name == "JdkSASL") module = "jdk.security.jgss"
      else if (name == "SunPKCS11") module = "jdk.crypto.cryptoki"
      else if (name !~ /^(SUN|SunRsaSign|SunJSSE|SunJCE)$/) module = ""
      if (module == "" || index(modules, "," module ",") > 0) print "security.provider." ++kept "=" name
      next
    }
    { print }' "$security_file" > "$security_file.new"
  mv "$security_file.new" "$security_file"
  # the runtime is made of the JDK's modules: it comes from the package that holds them
  printf '%s\t%s\n' "$java_home" "$jdk/jmods/java.base.jmod" >> "$copied"
  for file in "$out$java_home"/bin/* "$out$java_home"/lib/*.so "$out$java_home"/lib/server/*.so; do
    copy_libraries "$file"
  done
  # native code the jars carry is extracted at run time (to /tmp); what it loads must be in the image.
  # JNA keeps its libjnidispatch.so per platform under com/sun/jna/<os-arch>/ rather than META-INF/native.
  natives=$(mktemp -d)
  IFS=: read -r -a jars <<< "$classpath"
  for jar in "${jars[@]}"; do
    case $jar in *.jar) (cd "$natives" && "$jdk/bin/jar" xf "$jar" META-INF/native com/sun/jna 2>/dev/null) || true ;; esac
  done
  while IFS= read -r -d '' native; do
    # ldd says "not a dynamic executable" for another architecture's library: nothing is copied for it
    copy_libraries "$native"
  done < <(find "$natives" -name '*.so' -print0)
  rm -rf "$natives"
  copy_program "$(command -v dash)" /bin/sh
  if $with_mount; then
    copy_program "$(command -v mount)" /bin/mount
    copy_program "$(command -v umount)" /bin/umount
  fi
  mkdir -p "$out/etc" "$out/tmp"
  chmod 1777 "$out/tmp"
  # root for the agent (it mounts), 65532 for the control plane (the manifests' runAsUser)
  printf 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/nonexistent:/bin/false\n' > "$out/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$out/etc/group"
fi

cat > "$out/usr/local/bin/$program" <<LAUNCHER
#!/bin/sh
# Runs $program from the classes and libraries Jib put under /app. JAVA_OPTS holds the JVM's options.
# No core dump: the process holds tokens and keys; the JVM is told so as well.
ulimit -c 0
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options
exec "\${JAVA_HOME:-$java_home}/bin/java" -XX:-CreateCoredumpOnCrash \${JAVA_OPTS:-} -cp @/app/jib-classpath-file $main_class "\$@"
LAUNCHER
chmod 755 "$out/usr/local/bin/$program"

# The record of where the copied files came from (see the top of this file).
if [ -n "$sbom" ]; then
  mkdir -p "$out/usr/share/satoken/sbom"
  cp "$sbom" "$out/usr/share/satoken/sbom/$program.cdx.json"
fi
if [ -s "$copied" ]; then
  "$(dirname "$0")/debian-packages.sh" "$out" "$program" < "$copied"
  if [ -n "$sbom_out" ] && [ -e "$out/usr/share/satoken/sbom/$program-debian.cdx.json" ]; then
    mkdir -p "$sbom_out"
    cp "$out/usr/share/satoken/sbom/$program-debian.cdx.json" "$sbom_out/$program-image-debian.cdx.json"
  fi
fi
