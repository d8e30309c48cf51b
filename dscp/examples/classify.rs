//! For each IP precedence: the TOS byte, its DSCP (the class selector),
//! the names, and the output queue the Juniper precedence map of the
//! TransPAC QBSS deployment gives it. Then the named DSCPs that share a
//! precedence with a class selector, to show where a precedence-only
//! classifier puts modern markings.
//!
//! Run with `cargo run -p dscp --example classify`.

use dscp::classifier::qbss;
use dscp::{DsField, Dscp, Ecn, Precedence, PrecedenceClassifier};

fn queue_name(queue: u8) -> &'static str {
    match queue {
        qbss::BEST_EFFORT => "best effort",
        qbss::SCAVENGER => "QBSS (scavenger)",
        qbss::PREMIUM => "premium",
        qbss::NETWORK_CONTROL => "network control",
        _ => "?",
    }
}

fn main() {
    let map = PrecedenceClassifier::juniper_qbss();

    println!("Juniper QBSS precedence map (TransPAC deployment)");
    println!();
    println!(
        "{:<10} {:<22} {:<8} {:<6} {:<18} {:<6} queue",
        "precedence", "RFC 791 name", "TOS", "DSCP", "DSCP long name", "value"
    );
    for p in Precedence::ALL {
        let cs = p.class_selector();
        let tos = DsField::from_parts(cs, Ecn::NotEct);
        let q = map.queue(p);
        println!(
            "{:03b}        {:<22} {:#04x}     {:<6} {:<18} {:<6} {} {}",
            p.value(),
            format!("{p:#}"),
            tos.value(),
            cs,
            format!("{cs:#}"),
            cs.value(),
            q,
            queue_name(q)
        );
    }

    println!();
    println!("Other named code points through the same map:");
    for d in Dscp::all().filter(|d| d.name().is_some() && !d.is_class_selector()) {
        let q = map.classify(DsField::from(d));
        println!(
            "  {:<12} {:<24} TOS {:#04x}  precedence {:03b} {:<16} -> queue {} {}",
            d.to_string(),
            format!("{d:#}"),
            DsField::from(d).value(),
            d.precedence().value(),
            format!("({})", d.precedence()),
            q,
            queue_name(q)
        );
    }
}
