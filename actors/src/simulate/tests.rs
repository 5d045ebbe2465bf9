use super::*;

fn plan(text: &str) -> Plan {
    parse(text, "tiny", Adjust::default()).expect("scenario")
}

#[actix_rt::test]
async fn probe() {
    let p = plan(
        r##"
start = "2026-03-02T06:00:00Z"
hours = 18
[memory]
text = "# Memory\n- [ ] Send the report due: 2026-03-02 10:00\n- [ ] Night backup due: 2026-03-03 02:00\n"
[[cron]]
id = "water"
message = "Drink water"
every_minutes = 60
"##,
    );
    let out = simulate(&p, None).await.unwrap();
    println!("{}", out.text);
    for m in &out.report.marks {
        println!("{} {} {}", m.at, m.lane, m.label);
    }
}
