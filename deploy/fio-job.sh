# Sourced by the benchmark scripts: one fio job of the paper's workload.
#   fio_job DIR NAME RW BS FILES SIZE_MB   prints the job's bandwidth in MB/s (1e6 bytes)
# F files of S MiB, accessed round-robin (file_service_type=roundrobin), synchronous I/O.
# fio's terse output v3: field 7 is the read bandwidth, field 48 the write bandwidth (KiB/s).
fio_job() {
  local dir=$1 name=$2 rw=$3 bs=$4 files=$5 size_mb=$6
  local out
  out=$(fio --name="$name" --directory="$dir" --filename_format='bench.$filenum' \
    --nrfiles="$files" --filesize="${size_mb}m" --size="$((files * size_mb))m" \
    --file_service_type=roundrobin --rw="$rw" --bs="$bs" --ioengine=psync \
    --end_fsync=1 --output-format=terse --terse-version=3 2> /dev/null) ||
    { echo "fio $name failed in $dir" >&2; return 1; }
  awk -F';' '{ kib = ($48 > 0 ? $48 : $7); printf "%.1f\n", kib * 1024 / 1e6 }' <<< "$out"
}
