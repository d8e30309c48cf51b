//! From the TOML shape to a [`Scenario`], one function per table: the link, the
//! VC, the scheduler (its saturation rule, its queues, the queue-0 hypotheses),
//! the classifier; the streams are in [`super::stream`]. The tables are checked
//! in that order and each table's fields in the order of the format's
//! description, so the first problem of a file is the one reported.

use std::ops::Range;

use toml::Spanned;

use super::check::{line_of, Ctx, Keywords};
use super::raw::{RawClassifier, RawLink, RawQueue, RawScenario, RawScheduler, RawVc};
use super::stream::{streams, StreamBounds};
use super::{Scenario, ScenarioError, Vc, MAX_DURATION_S};
use crate::classify::{Classifier, ClassifierKind};
use crate::link::{wire_bytes, Link, RAW};
use crate::sched::{
    ClassSpec, Hypotheses, QueueSpec, SaturationSpec, SchedulerSpec, MAX_QUEUES, QUEUE_CAPACITY,
};
use crate::vc::VcKind;

/// `link.framing`.
const FRAMINGS: &Keywords<bdp::Framing> = &[
    ("raw", RAW),
    ("ethernet", bdp::Framing::Ethernet { vlan_tags: 0 }),
    (
        "atm",
        bdp::Framing::Aal5 {
            encapsulation: bdp::AtmEncapsulation::LlcSnap,
        },
    ),
];

/// `vc.kind`.
const VC_KINDS: &Keywords<VcKind> = &[("policed", VcKind::Policed), ("shaped", VcKind::Shaped)];

/// `scheduler.fairness`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fairness {
    /// DRR, quantum = weight x mtu.
    Bytes,
    /// Classic WRR.
    Packets,
}

const FAIRNESS: &Keywords<Fairness> = &[("bytes", Fairness::Bytes), ("packets", Fairness::Packets)];

/// `scheduler.saturation`.
#[derive(Clone, Copy)]
enum Saturation {
    /// WRR at or above a threshold (given by `threshold_packets` or `threshold_bytes`).
    WhenSaturated,
    /// Always WRR.
    WorkConserving,
    /// WRR on every packet.
    Forced,
}

const SATURATIONS: &Keywords<Saturation> = &[
    ("when-saturated", Saturation::WhenSaturated),
    ("work-conserving", Saturation::WorkConserving),
    ("forced", Saturation::Forced),
];

/// `scheduler.queue[i].class`.
#[derive(Clone, Copy)]
enum QueueClass {
    /// A weight (0: never served).
    Weighted,
    /// A weight, served only when every other queue is empty.
    Scavenger,
    /// Strict priority: no weight needed.
    Priority,
}

const QUEUE_CLASSES: &Keywords<QueueClass> = &[
    ("weighted", QueueClass::Weighted),
    ("scavenger", QueueClass::Scavenger),
    ("priority", QueueClass::Priority),
];

/// `classifier.by`.
const CLASSIFIER_KINDS: &Keywords<ClassifierKind> = &[
    ("precedence", ClassifierKind::Precedence),
    ("dscp", ClassifierKind::Dscp),
];

/// `classifier.map`: the built-in maps.
#[derive(Clone, Copy)]
enum Map {
    /// The TransPAC Juniper precedence-map.
    JuniperQbss,
}

const MAPS: &Keywords<Map> = &[("juniper-qbss", Map::JuniperQbss)];

/// The whole scenario, table by table.
pub(super) fn validate(cx: &Ctx, raw: RawScenario) -> Result<Scenario, ScenarioError> {
    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() || name.len() > 64 {
        return Err(cx.err(raw.name.span(), "name", "must be 1 to 64 characters"));
    }
    let duration_s = cx.int(&raw.duration_s, "duration_s", 1, i64::from(MAX_DURATION_S))? as u32;
    let link = link(cx, &raw.link)?;
    let vc = raw.vc.as_ref().map(|v| vc(cx, v, &link)).transpose()?;
    let scheduler = scheduler(cx, &raw.scheduler)?;
    let classifier = classifier(
        cx,
        raw.classifier.as_ref(),
        raw.scheduler.queue.span(),
        scheduler.queues.len(),
    )?;
    let bounds = StreamBounds {
        duration_s,
        line_bps: link.line_bps,
        fairness_mtu: scheduler.fairness_mtu,
    };
    let streams = streams(cx, &raw.stream, &bounds)?;
    Ok(Scenario {
        name,
        description: raw.description.trim().to_string(),
        duration_s,
        link,
        vc,
        classifier,
        scheduler,
        streams,
    })
}

/// `[link]`: a link type of [`bdp::LINKS`], or a rate and a framing.
fn link(cx: &Ctx, raw: &RawLink) -> Result<Link, ScenarioError> {
    match (&raw.kind, &raw.rate) {
        (Some(kind), None) => {
            if let Some(f) = &raw.framing {
                return Err(cx.err(f.span(), "link.framing", "a link type has its own framing"));
            }
            Link::by_name(kind.get_ref(), raw.name.clone()).ok_or_else(|| {
                let names: Vec<&str> = bdp::LINKS.iter().map(|l| l.name).collect();
                cx.err(
                    kind.span(),
                    "link.type",
                    format_args!("{:?} is not one of {}", kind.get_ref(), names.join(", ")),
                )
            })
        }
        (None, Some(rate)) => {
            let framing = cx.keyword_or(raw.framing.as_ref(), "link.framing", FRAMINGS, RAW)?;
            let line_bps = cx.rate(rate, "link.rate")?;
            Ok(Link {
                name: raw.name.clone().unwrap_or_else(|| rate.get_ref().clone()),
                line_bps,
                payload_bps: line_bps,
                framing,
            })
        }
        (Some(kind), Some(_)) => {
            Err(cx.err(kind.span(), "link.type", "give type or rate, not both"))
        }
        (None, None) => Err(ScenarioError {
            line: line_of(cx.src, cx.src.find("[link]").unwrap_or(0)),
            field: "link".into(),
            message: "give the link's type (oc3-atm, ethernet-10g, ...) or its rate".into(),
        }),
    }
}

/// `[vc]`: policed or shaped, at most the link's payload rate.
fn vc(cx: &Ctx, raw: &RawVc, link: &Link) -> Result<Vc, ScenarioError> {
    let kind = cx.keyword(&raw.kind, "vc.kind", VC_KINDS)?;
    let rate_bps = cx.rate(&raw.rate, "vc.rate")?;
    if rate_bps > link.payload_bps() {
        return Err(cx.err(
            raw.rate.span(),
            "vc.rate",
            "a VC cannot be faster than the link's payload rate",
        ));
    }
    let burst_bytes = match &raw.burst_bytes {
        Some(b) => cx.int(b, "vc.burst_bytes", 64, 1 << 30)? as u64,
        None => 2 * wire_bytes(link.framing, 1500),
    };
    Ok(Vc {
        kind,
        rate_bps,
        burst_bytes,
    })
}

/// `[scheduler]`: fairness, when the weights apply, the queues, the hypotheses.
fn scheduler(cx: &Ctx, raw: &RawScheduler) -> Result<SchedulerSpec, ScenarioError> {
    let mtu = match &raw.mtu {
        Some(m) => cx.int(m, "scheduler.mtu", 64, 65535)? as u32,
        None => 1500,
    };
    let fairness = cx.keyword_or(
        raw.fairness.as_ref(),
        "scheduler.fairness",
        FAIRNESS,
        Fairness::Bytes,
    )?;
    let saturation = saturation(cx, raw)?;
    let queues = queues(cx, &raw.queue)?;
    let hypotheses = hypotheses(cx, raw, saturation, queues.len())?;
    Ok(SchedulerSpec {
        fairness_mtu: (fairness == Fairness::Bytes).then_some(mtu),
        saturation,
        queues,
        hypotheses,
    })
}

/// `scheduler.saturation` and its threshold (`when-saturated`, the default, needs one).
fn saturation(cx: &Ctx, raw: &RawScheduler) -> Result<SaturationSpec, ScenarioError> {
    let field = "scheduler.saturation";
    let mode = cx.keyword_or(
        raw.saturation.as_ref(),
        field,
        SATURATIONS,
        Saturation::WhenSaturated,
    )?;
    match mode {
        Saturation::WorkConserving => return Ok(SaturationSpec::WorkConserving),
        Saturation::Forced => return Ok(SaturationSpec::Forced),
        Saturation::WhenSaturated => {}
    }
    match (&raw.threshold_packets, &raw.threshold_bytes) {
        (Some(p), None) => Ok(SaturationSpec::WhenSaturatedPackets(cx.int(
            p,
            "scheduler.threshold_packets",
            0,
            1 << 40,
        )? as u64)),
        (None, Some(b)) => Ok(SaturationSpec::WhenSaturatedBytes(cx.int(
            b,
            "scheduler.threshold_bytes",
            0,
            1 << 50,
        )? as u64)),
        (Some(p), Some(_)) => Err(cx.err(
            p.span(),
            "scheduler.threshold_packets",
            "give threshold_packets or threshold_bytes, not both",
        )),
        (None, None) => {
            let span = raw
                .saturation
                .as_ref()
                .map_or(raw.queue.span(), |x| x.span());
            Err(cx.err(
                span,
                field,
                "when-saturated needs threshold_packets or threshold_bytes",
            ))
        }
    }
}

/// `scheduler.queue`: 1 to [`MAX_QUEUES`] queues, at most one of them priority.
fn queues(cx: &Ctx, raw: &Spanned<Vec<RawQueue>>) -> Result<Vec<QueueSpec>, ScenarioError> {
    let list = raw.get_ref();
    if list.is_empty() || list.len() > MAX_QUEUES {
        return Err(cx.err(
            raw.span(),
            "scheduler.queue",
            format!("give 1 to {MAX_QUEUES} queues"),
        ));
    }
    let queues = list
        .iter()
        .enumerate()
        .map(|(i, q)| queue(cx, i, q, raw.span()))
        .collect::<Result<Vec<_>, _>>()?;
    let priority = queues
        .iter()
        .filter(|q| q.class == ClassSpec::Priority)
        .count();
    if priority > 1 {
        return Err(cx.err(raw.span(), "scheduler.queue", "at most one priority queue"));
    }
    Ok(queues)
}

/// Queue `i` (from 0) of `scheduler.queue`, whose span is `list`.
fn queue(
    cx: &Ctx,
    i: usize,
    raw: &RawQueue,
    list: Range<usize>,
) -> Result<QueueSpec, ScenarioError> {
    let path = format!("scheduler.queue[{}]", i + 1);
    let class = cx.keyword_or(
        raw.class.as_ref(),
        &format!("{path}.class"),
        QUEUE_CLASSES,
        QueueClass::Weighted,
    )?;
    let weight = match (&raw.weight, class) {
        (Some(w), _) => cx.int(w, &format!("{path}.weight"), 0, 1 << 20)? as u32,
        (None, QueueClass::Priority) => 0,
        (None, _) => return Err(cx.err(list, path, "missing field `weight`")),
    };
    let limit_packets = match &raw.limit_packets {
        Some(l) => cx.int(
            l,
            &format!("{path}.limit_packets"),
            1,
            QUEUE_CAPACITY as i64,
        )? as usize,
        None => QUEUE_CAPACITY,
    };
    let limit_bytes = match &raw.limit_bytes {
        Some(l) => cx.int(l, &format!("{path}.limit_bytes"), 1, 1 << 40)? as u64,
        None => u64::MAX,
    };
    Ok(QueueSpec {
        name: raw.name.clone().unwrap_or_else(|| format!("queue {i}")),
        class: match class {
            QueueClass::Weighted => ClassSpec::Weighted(weight),
            QueueClass::Scavenger => ClassSpec::Scavenger(weight),
            QueueClass::Priority => ClassSpec::Priority,
        },
        limit_packets,
        limit_bytes,
    })
}

/// The queue-0 hypothesis switches of `[scheduler]` (all off by default).
fn hypotheses(
    cx: &Ctx,
    raw: &RawScheduler,
    saturation: SaturationSpec,
    queues: usize,
) -> Result<Hypotheses, ScenarioError> {
    let saturation_queue = match &raw.saturation_queue {
        Some(q) => {
            if !matches!(
                saturation,
                SaturationSpec::WhenSaturatedPackets(_) | SaturationSpec::WhenSaturatedBytes(_)
            ) {
                return Err(cx.err(
                    q.span(),
                    "scheduler.saturation_queue",
                    "only saturation = \"when-saturated\" has a queue to watch",
                ));
            }
            Some(cx.int(q, "scheduler.saturation_queue", 0, queues as i64 - 1)? as usize)
        }
        None => None,
    };
    let ingress_fifo_packets = match &raw.ingress_fifo_packets {
        Some(n) => Some(cx.int(n, "scheduler.ingress_fifo_packets", 1, 1 << 20)? as usize),
        None => None,
    };
    Ok(Hypotheses {
        saturation_queue,
        queue0_outside_wrr: raw.queue0_outside_wrr.unwrap_or(false),
        ingress_fifo_packets,
    })
}

/// `[classifier]` (the Juniper map when absent), which may use only the
/// scheduler's `queues` (the span of `scheduler.queue` is `queue_list`).
fn classifier(
    cx: &Ctx,
    raw: Option<&RawClassifier>,
    queue_list: Range<usize>,
    queues: usize,
) -> Result<Classifier, ScenarioError> {
    let classifier = match raw {
        None => Classifier::juniper_qbss(),
        Some(c) => classifier_table(cx, c, queues)?,
    };
    if let Some(q) = classifier.max_queue() {
        if usize::from(q) >= queues {
            return Err(cx.err(
                queue_list,
                "scheduler.queue",
                format!("the classifier uses queue {q}: define {} queues", q + 1),
            ));
        }
    }
    Ok(classifier)
}

/// A `[classifier]` table: a built-in map or a table of queue numbers.
fn classifier_table(
    cx: &Ctx,
    raw: &RawClassifier,
    queues: usize,
) -> Result<Classifier, ScenarioError> {
    let kind = cx.keyword_or(
        raw.by.as_ref(),
        "classifier.by",
        CLASSIFIER_KINDS,
        ClassifierKind::Precedence,
    )?;
    match (&raw.map, &raw.queues) {
        (Some(m), None) => match cx.keyword(m, "classifier.map", MAPS)? {
            Map::JuniperQbss if kind != ClassifierKind::Precedence => Err(cx.err(
                m.span(),
                "classifier.map",
                "juniper-qbss is a precedence map: use by = \"precedence\"",
            )),
            Map::JuniperQbss => Ok(Classifier::juniper_qbss()),
        },
        (None, Some(table)) => {
            let want = kind.entries();
            if table.get_ref().len() != want {
                return Err(cx.err(
                    table.span(),
                    "classifier.queues",
                    format!("give exactly {want} queue numbers, one per {}", kind.name()),
                ));
            }
            let entries = table
                .get_ref()
                .iter()
                .enumerate()
                .map(|(i, q)| {
                    let field = format!("classifier.queues[{}]", i + 1);
                    cx.int(q, &field, 0, queues as i64 - 1).map(|q| q as u8)
                })
                .collect::<Result<Vec<u8>, _>>()?;
            Ok(Classifier::from_table(kind, &entries))
        }
        (Some(m), Some(_)) => {
            Err(cx.err(m.span(), "classifier.map", "give map or queues, not both"))
        }
        (None, None) => Ok(Classifier::juniper_qbss()),
    }
}
