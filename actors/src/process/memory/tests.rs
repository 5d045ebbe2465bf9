use super::*;

const SMAPS: &str = "\
00200000-00bdc000 r--p 00000000 fe:00 1234 /usr/bin/raven
Size:              10000 kB
Rss:                1076 kB
Anonymous:             0 kB
Swap:                  0 kB
00bdc000-01c6f000 r-xp 009db000 fe:00 1234 /usr/bin/raven
Rss:                9784 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
01c6f000-01e20000 r--p 01a6d000 fe:00 1234 /usr/bin/raven
Rss:                 576 kB
Private_Dirty:       120 kB
Anonymous:           120 kB
01e20000-01e27000 rw-p 01c1d000 fe:00 1234 /usr/bin/raven
Rss:                  28 kB
Anonymous:            28 kB
02000000-02100000 rw-p 00000000 00:00 0 [heap]
Rss:                 360 kB
Anonymous:           360 kB
7f0000000000-7f0000010000 r--p 00000000 fe:00 99 /usr/lib/locale/C.utf8/LC_CTYPE
Rss:                   0 kB
Anonymous:             0 kB
7f0000100000-7f0000200000 r-xp 00028000 fe:00 77 /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                1088 kB
Anonymous:             0 kB
Swap:                  4 kB
7fff00000000-7fff00002000 r-xp 00000000 00:00 0 [vdso]
Rss:                   8 kB
Anonymous:             0 kB
";

#[test]
fn only_read_only_file_pages_that_hold_nothing_written_are_given_back() {
    let got = clean_mappings(SMAPS);
    let want = vec![
        Clean { start: 0x0020_0000, len: 0x009d_c000, resident: 1076 * 1024 },
        Clean { start: 0x00bd_c000, len: 0x0109_3000, resident: 9784 * 1024 },
    ];
    // Not the relocated constants (written), the data and the heap (writable), an empty
    // mapping, a library with a page in swap, nor the kernel's [vdso].
    assert_eq!(got, want);
}

fn resident_file_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("RssFile:")).unwrap();
    field(line).unwrap().1
}

#[cfg(target_os = "linux")]
#[test]
fn giving_back_shrinks_the_resident_set_and_the_code_still_runs() {
    let before = resident_file_kib();
    let given = give_back().unwrap();
    let after = resident_file_kib();
    assert!(given.mapped > 0, "{given:?}");
    assert!(after < before, "resident file pages {before} kB before, {after} kB after");
    // Everything given back comes again from the file at its next use.
    let again = clean_mappings(&std::fs::read_to_string("/proc/self/smaps").unwrap());
    assert!(!again.is_empty(), "the code that runs now is mapped again");
}
