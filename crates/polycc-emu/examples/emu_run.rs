//! Runs a scenario file in the emulator and prints its summary as JSON:
//! `cargo run --release -p polycc-emu --example emu_run -- FILE` (as root).

fn main() {
    let path = std::env::args().nth(1).expect("usage: emu_run FILE");
    let registry = polycc::Registry::standard();
    let model = match polycc_sim::scenario::load_file(std::path::Path::new(&path), &registry) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    match polycc_emu::run(&model, &polycc_emu::Options::default()) {
        Ok(out) => println!(
            "{}",
            serde_json::to_string_pretty(&out.summary).expect("serialisable")
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(if e.is_user_error() { 2 } else { 1 });
        }
    }
}
