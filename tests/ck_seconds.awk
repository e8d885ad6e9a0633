# SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause)
# Each suite's seconds from libcheck's XML log (CK_XML_LOG_FILE_NAME), one
# line "PREFIX ck_suite_seconds SUITE S" each, largest first when sorted by
# the caller: what each suite costs CI (the host's make integration, the
# guests' tests/vmtest/init.sh; docs/vmtest.md "CI time"). awk -v prefix=P.
/<title>/ { t = $0; gsub(/.*<title>|<\/title>.*/, "", t) }
/<test / { in_test = 1 }
/<\/test>/ { in_test = 0 }
/<duration>/ && in_test { d = $0; gsub(/.*<duration>|<\/duration>.*/, "", d); s[t] += d }
END { for (t in s) printf "%sck_suite_seconds %s %.1f\n", prefix, t, s[t] }
