fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("sysbench") {
        match versus::workload::sysbench::main(args[1..].to_vec()) {
            Ok(code) => std::process::exit(code),
            Err(e) => {
                eprintln!("versus: {e}");
                std::process::exit(1);
            }
        }
    }
}
