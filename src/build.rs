// The schema files are embedded with `include_str!`/`migrate!`; rebuild when any of them changes.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
