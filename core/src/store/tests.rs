use super::*;
use serde::Deserialize;

#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
struct Counter {
    n: u64,
}

#[test]
fn an_update_that_changes_nothing_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = JsonStateStore::new(dir.path().join("state.json"));
    store.update("counter", |_: &mut Counter| ()).unwrap();
    assert!(!store.path().exists(), "a default left as it was is not written");
    store.update("counter", |c: &mut Counter| c.n = 1).unwrap();
    let before = store.stamp();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options().append(true).open(store.path()).unwrap().set_modified(old).unwrap();
    let before_mtime = std::fs::metadata(store.path()).unwrap().modified().unwrap();
    store.update("counter", |c: &mut Counter| c.n = 1).unwrap();
    assert_eq!(std::fs::metadata(store.path()).unwrap().modified().unwrap(), before_mtime, "same value, no write");
    assert!(before.is_some());
    store.update("counter", |c: &mut Counter| c.n = 2).unwrap();
    assert_ne!(std::fs::metadata(store.path()).unwrap().modified().unwrap(), before_mtime);
}

#[test]
fn update_round_trips_and_keeps_other_sections() {
    let dir = tempfile::tempdir().unwrap();
    let store = JsonStateStore::new(dir.path().join("state.json"));
    store.update("a", |c: &mut Counter| c.n += 2).unwrap();
    store.update("b", |c: &mut Counter| c.n += 5).unwrap();
    assert_eq!(store.read::<Counter>("a").unwrap().0, Counter { n: 2 });
    assert_eq!(store.read::<Counter>("b").unwrap().0, Counter { n: 5 });
    assert_eq!(store.read::<Counter>("missing").unwrap().0, Counter::default());
}

#[test]
fn corrupt_file_is_kept_aside_not_overwritten_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    let garbage = b"{\"policy\": [truncated";
    std::fs::write(&path, garbage).unwrap();
    let store = JsonStateStore::new(&path);
    store.update("a", |c: &mut Counter| c.n += 1).unwrap();

    let notices = store.take_notices();
    assert_eq!(notices.len(), 1);
    assert!(notices[0].contains(&path.display().to_string()), "{}", notices[0]);
    let aside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("state.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(notices[0].contains(&aside[0].display().to_string()));
    assert_eq!(std::fs::read(&aside[0]).unwrap(), garbage, "the copy is byte-identical");
    assert_eq!(store.read::<Counter>("a").unwrap().0, Counter { n: 1 }, "started empty");
}

#[test]
fn a_section_of_the_wrong_shape_is_kept_and_reset_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    std::fs::write(&path, br#"{"a": {"n": "seven"}, "b": {"n": 3}}"#).unwrap();
    let store = JsonStateStore::new(&path);
    assert_eq!(store.read::<Counter>("a").unwrap().0, Counter::default());
    assert_eq!(store.read::<Counter>("b").unwrap().0, Counter { n: 3 });
    let notices = store.take_notices();
    assert!(notices[0].contains("section `a`"), "{notices:?}");
}

#[test]
fn a_held_lock_delays_no_reader_and_a_writer_only_for_the_bounded_wait() {
    let dir = tempfile::tempdir().unwrap();
    let store = JsonStateStore::new(dir.path().join("state.json"));
    store.update("a", |c: &mut Counter| c.n = 4).unwrap();
    let _peer = FileLock::exclusive(&lock_path_for(store.path())).unwrap();
    let started = std::time::Instant::now();
    assert_eq!(store.read::<Counter>("a").unwrap().0, Counter { n: 4 }, "a reader takes no lock");
    assert!(started.elapsed() < atomic::LOCK_WAIT / 2);
    let err = store.update("a", |c: &mut Counter| c.n = 5).unwrap_err().to_string();
    assert!(started.elapsed() >= atomic::LOCK_WAIT, "it waited for the peer first");
    assert!(err.contains("state.json") && err.contains("locked by another process"), "{err}");
    assert_eq!(store.read::<Counter>("a").unwrap().0, Counter { n: 4 }, "nothing was written");
}

#[test]
fn a_section_of_the_wrong_shape_is_kept_aside_once_however_often_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    std::fs::write(&path, br#"{"a": {"n": "seven"}}"#).unwrap();
    let store = JsonStateStore::new(&path);
    for _ in 0..20 {
        assert_eq!(store.read::<Counter>("a").unwrap().0, Counter::default());
    }
    assert_eq!(store.take_notices().len(), 1, "reported once");
    let copies = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".corrupt-"))
        .count();
    assert_eq!(copies, 1);
}

#[test]
fn a_write_past_the_bound_is_refused_and_the_file_keeps_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let store = JsonStateStore::new(dir.path().join("state.json"));
    store.update("small", |v: &mut String| *v = "kept".into()).unwrap();
    let before = std::fs::read(store.path()).unwrap();
    let err = store.update("big", |v: &mut String| *v = "x".repeat(MAX_STATE_BYTES)).unwrap_err();
    assert!(matches!(&err, StoreError::TooLarge { section, .. } if section == "big"), "{err}");
    assert_eq!(std::fs::read(store.path()).unwrap(), before);
}

#[test]
fn stamp_changes_on_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = JsonStateStore::new(dir.path().join("state.json"));
    assert!(store.stamp().is_none());
    store.update("a", |c: &mut Counter| c.n += 1).unwrap();
    let s1 = store.stamp().unwrap();
    store.update("a", |c: &mut Counter| c.n += 1).unwrap();
    assert_ne!(store.stamp().unwrap(), s1);
}

#[test]
fn no_temp_files_are_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let store = JsonStateStore::new(dir.path().join("state.json"));
    for _ in 0..3 {
        store.update("a", |c: &mut Counter| c.n += 1).unwrap();
    }
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
}
