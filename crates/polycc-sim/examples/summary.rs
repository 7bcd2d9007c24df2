//! Prints the summary of a scenario as JSON: `cargo run --release -p polycc-sim --example summary -- FILE`.

fn main() {
    let Some(f) = std::env::args().nth(1) else {
        eprintln!("usage: summary SCENARIO.toml");
        std::process::exit(2);
    };
    match polycc_sim::run_file(std::path::Path::new(&f)) {
        Ok(out) => println!(
            "{}",
            serde_json::to_string_pretty(&out.summary).expect("serialisable")
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
