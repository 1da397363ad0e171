# shellcheck shell=bash
# The verdict of a scripts/gpu-check.sh summary, shared by scripts/gpu-check-part.sh and
# scripts/gpu-gemm-quick.sh. A targeted gpu-check run (CM_GPU_CHECK_ONLY, CM_GPU_CHECK_TESTS...)
# exits 1 by design, its skipped stages being no pass, so these scripts judge its summary table
# instead. Source it, then:
#
#   cm_failed_stages SUMMARY    prints the stages of SUMMARY's table that are FAIL (space
#                               separated; nothing when none is); "no-summary" when SUMMARY has
#                               no table at all (gpu-check killed or crashed: nothing passed)
cm_failed_stages() {
    if ! grep -q '^stage  *result' "$1" 2>/dev/null; then
        echo "no-summary"
        return
    fi
    sed -n '/^stage  *result/,$p' "$1" |
        awk '$1 ~ /^(build|tests|sanitizer|racecheck|doctor|examples|bench|soak)$/ &&
             $2 == "FAIL" {print $1}' | tr '\n' ' ' | sed 's/ *$//'
}
