#!/usr/bin/env bash
# Builds the files of a satoken image for one architecture, for Jib to lay on an empty ("scratch") base: a
# Java runtime jlink'd from the build JDK, the shared libraries that runtime and the other programs load, dash
# as /bin/sh for the launcher and, for the agent, util-linux's mount and umount. No base image is pulled: none
# can be here. For this machine's architecture, they are copied from this machine; for another one, from that
# architecture's Debian packages, downloaded and unpacked by debian-sysroot.sh (the jlink of this machine's
# JDK then links that architecture's jmods).
#
#   build-rootfs.sh OUT PROGRAM MAIN_CLASS [--arch ARCH] [--classpath JARS] [--modules LIST] [--mount]
#                   [--no-runtime] [--sbom FILE] [--sbom-out DIR]
#
#   OUT           the directory to fill (emptied first); Jib adds it to the image as one layer
#   PROGRAM       the launcher's name, put in /usr/local/bin (satoken-agent, satoken-controlplane)
#   MAIN_CLASS    the class the launcher runs, on the classpath Jib writes to /app/jib-classpath-file
#   --arch        the image's Debian architecture, amd64 or arm64 (default: this machine's)
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
#   --sbom-out    a directory to put copies of the image's Debian SBOM and package list in, next to the image
#                 archive: PROGRAM-image-ARCH-debian.cdx.json and PROGRAM-image-ARCH-debian-packages.txt
#
# Every file copied from this machine or a package is recorded with the Debian package it came from
# (dpkg-query -S, or the package's own file list), so that scanners and people can tell what the image holds:
#   /usr/share/satoken/debian-packages.txt             each copied file, its package, version and architecture
#   /usr/share/satoken/sbom/PROGRAM-debian.cdx.json    those packages as a CycloneDX SBOM (purl pkg:deb/...)
#   /var/lib/dpkg/status.d/PACKAGE                     one dpkg status stanza per package, where image scanners
#                                                      (Trivy, Syft/Grype) look in distroless-style images
#
# JAVA_HOME names the JDK whose jlink runs; for this machine's architecture its jmods/ must exist (Debian:
# openjdk-17-jmods). JDK 17's jlink takes another 17 update's jmods (it compares only the feature and interim
# numbers), so the downloaded JDK need not be the same update as this one.
set -euo pipefail

out=$1 program=$2 main_class=$3
shift 3
with_mount=false runtime=true classpath= sbom= sbom_out= modules= arch=
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=$2; shift ;;
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

host_arch=$(dpkg --print-architecture 2>/dev/null || true)
arch=${arch:-$host_arch}
# empty: files come from this machine; else the unpacked packages of $arch (debian-sysroot.sh)
sysroot=
if $runtime && [ "$arch" != "$host_arch" ]; then
  case $arch in
    amd64) triplet=x86_64-linux-gnu machine='X86-64' ;;
    arm64) triplet=aarch64-linux-gnu machine=AArch64 ;;
    *) echo "build-rootfs.sh: no image for architecture '$arch' (amd64, arm64)" >&2; exit 2 ;;
  esac
  sysroot=$("$(dirname "$0")/debian-sysroot.sh" "$arch")
  # debian-packages.sh looks the copied files up in the packages' file lists, not in dpkg's database
  export DEBIAN_PACKAGES_INDEX=$sysroot.index
fi

rm -rf "$out"
mkdir -p "$out/usr/local/bin"
# what was copied: "IMAGE_PATH<TAB>SOURCE_PATH" lines, for the package list at the end; SOURCE_PATH is a path
# of this machine or, with a sysroot, the path in the package that shipped the file
copied=$(mktemp)
trap 'rm -f "$copied"' EXIT

# Copies each library FILE loads to the same path under $out. Jib copies what a symbolic link points to,
# so the copies are files; LD_LIBRARY_PATH lets ldd find the runtime's own libraries.
copy_libraries() {
  if [ -n "$sysroot" ]; then
    copy_package_libraries "$1"
    return
  fi
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

# The path, inside the sysroot, of the file that PATH (a path inside the sysroot) names: links are followed
# there, not on this machine (the packages' absolute links point into the sysroot once unpacked).
sysroot_real() {
  local path=$1 target i
  for ((i = 0; i < 40; i++)); do
    [ -L "$sysroot$path" ] || break
    target=$(readlink "$sysroot$path")
    case $target in
      /*) path=$target ;;
      *) path=$(dirname "$path")/$target ;;
    esac
    path=$(realpath -ms "$path")
  done
  echo "$path"
}

# ldd cannot read another architecture's files, so readelf says what FILE loads: its interpreter and each
# NEEDED library, looked for in the runtime and then in the packages' library directories, and copied (with
# what it loads in turn) to /lib/<triplet>/, where the loader looks. A file of another architecture (the jars
# carry native code for several) loads nothing here.
copy_package_libraries() {
  local file=$1 interpreter name dir found
  readelf -h "$file" 2>/dev/null | grep -q "Machine:.*$machine\$" || return 0
  interpreter=$(readelf -lW "$file" | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
  if [ -n "$interpreter" ]; then copy_package_file "$interpreter" "$interpreter"; fi
  for name in $(readelf -dW "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
    # the loader (libc names it) is the interpreter, already at the path every program names
    case $name in ld-linux-*) continue ;; esac
    found=
    for dir in "$out$java_home/lib" "$out$java_home/lib/server" "$out/lib/$triplet"; do
      if [ -e "$dir/$name" ]; then found=$dir; break; fi
    done
    [ -z "$found" ] || continue
    for dir in "/lib/$triplet" "/usr/lib/$triplet"; do
      if [ -e "$sysroot$dir/$name" ] || [ -L "$sysroot$dir/$name" ]; then found=$dir; break; fi
    done
    if [ -z "$found" ]; then
      echo "build-rootfs.sh: $file loads $name, which neither the runtime nor the $arch packages have" >&2
      exit 2
    fi
    copy_package_file "$found/$name" "/lib/$triplet/$name"
  done
}

copy_package_file() { # copies SYSROOT_PATH to IMAGE_PATH under $out as a file, then what it loads
  local real
  [ ! -e "$out$2" ] || return 0
  real=$(sysroot_real "$1")
  mkdir -p "$out$(dirname "$2")"
  cp "$sysroot$real" "$out$2"
  printf '%s\t%s\n' "$2" "$real" >> "$copied"
  copy_package_libraries "$out$2"
}

copy_program() { # copies a program (SOURCE, from this machine or the sysroot) to PATH under $out, with its libraries
  if [ -n "$sysroot" ]; then
    copy_package_file "$1" "$2"
    return
  fi
  mkdir -p "$out$(dirname "$2")"
  cp -L "$1" "$out$2"
  printf '%s\t%s\n' "$2" "$1" >> "$copied"
  copy_libraries "$1"
}

if $runtime; then
  jdk=${JAVA_HOME:?JAVA_HOME must name the JDK to jlink}
  # the jmods the runtime is made of: this JDK's, or the downloaded JDK's of the image's architecture
  jmods=$jdk/jmods link_options=(--strip-debug)
  if [ -n "$sysroot" ]; then
    jmods=$sysroot/usr/lib/jvm/java-17-openjdk-$arch/jmods
    # jlink takes the target from the java.base it is given, so every module comes from $jmods. --strip-debug
    # would also strip native symbols with this machine's objcopy, which cannot read another architecture's
    # files; Debian's natives are stripped already.
    link_options=(--module-path "$jmods" --strip-java-debug-attributes)
  elif [ ! -d "$jmods" ]; then
    echo "build-rootfs.sh: $jmods not found; install the JDK's jmods (Debian: openjdk-17-jmods)" >&2
    exit 2
  fi
  "$jdk/bin/jlink" --add-modules "$modules" "${link_options[@]}" --no-header-files --no-man-pages --compress=2 \
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
  printf '%s\t%s\n' "$java_home" "${jmods#"$sysroot"}/java.base.jmod" >> "$copied"
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
    # JNA's directories of other systems hold ELFs of the same architecture (FreeBSD's load libc.so.7)
    case ${native#"$natives"} in */com/sun/jna/*) case $native in */com/sun/jna/linux-*) ;; *) continue ;; esac ;; esac
    # ldd says "not a dynamic executable" for another architecture's library (copy_package_libraries checks
    # the machine): nothing is copied for it
    copy_libraries "$native"
  done < <(find "$natives" -name '*.so' -print0)
  rm -rf "$natives"
  if [ -n "$sysroot" ]; then
    dash=/bin/dash mount=/bin/mount umount=/bin/umount
  else
    dash=$(command -v dash) mount=$(command -v mount) umount=$(command -v umount)
  fi
  copy_program "$dash" /bin/sh
  if $with_mount; then
    copy_program "$mount" /bin/mount
    copy_program "$umount" /bin/umount
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
    cp "$out/usr/share/satoken/sbom/$program-debian.cdx.json" "$sbom_out/$program-image-$arch-debian.cdx.json"
    cp "$out/usr/share/satoken/debian-packages.txt" "$sbom_out/$program-image-$arch-debian-packages.txt"
  fi
fi
