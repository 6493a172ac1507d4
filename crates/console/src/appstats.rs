//! An `/appstats` answer read into the figures the dashboard shows, and nothing else: per day its
//! date, per agent the calls, `overall`'s hit/miss and coverage and each category's hit/miss, as the
//! API wrote them. The answer of a month of a hundred agents is over a megabyte, mostly figures the
//! page does not show; they are skipped while reading, and the texts kept point into the answer.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// A figure as the API wrote it: a text or a number. Anything else (absent, `null`, an object) is no
/// figure: an empty cell.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Figure<'a> {
    #[default]
    None,
    Text(Cow<'a, str>),
    Number(serde_json::Number),
}

impl Figure<'_> {
    /// The figure's text (empty for none).
    pub fn text(&self) -> String {
        match self {
            Figure::None => String::new(),
            Figure::Text(text) => text.to_string(),
            Figure::Number(number) => number.to_string(),
        }
    }
}

/// Written into a page straight from the answer (the agents' table has a cell per day, agent and
/// category).
impl maud::Render for Figure<'_> {
    fn render_to(&self, buffer: &mut String) {
        use std::fmt::Write;
        match self {
            Figure::None => {}
            Figure::Text(text) => {
                let _ = maud::Escaper::new(buffer).write_str(text);
            }
            Figure::Number(number) => {
                let _ = write!(buffer, "{number}");
            }
        }
    }
}

/// A value of the answer as read: a figure, or where agents stand an agent's figures.
enum Item<'a> {
    Figure(Figure<'a>),
    Agent(AgentDay<'a>),
}

/// Reads any value as an [`Item`]: an object is an agent's figures where `agents` says so, else no
/// figure (skipped).
struct ReadItem<'a> {
    agents: bool,
    read: PhantomData<Item<'a>>,
}

impl<'de: 'a, 'a> Visitor<'de> for ReadItem<'a> {
    type Value = Item<'a>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a figure or an agent's figures")
    }
    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Item<'a>, E> {
        Ok(Item::Figure(Figure::Text(Cow::Borrowed(text))))
    }
    fn visit_str<E>(self, text: &str) -> Result<Item<'a>, E> {
        Ok(Item::Figure(Figure::Text(Cow::Owned(text.to_string()))))
    }
    fn visit_u64<E>(self, number: u64) -> Result<Item<'a>, E> {
        Ok(Item::Figure(Figure::Number(number.into())))
    }
    fn visit_i64<E>(self, number: i64) -> Result<Item<'a>, E> {
        Ok(Item::Figure(Figure::Number(number.into())))
    }
    fn visit_f64<E>(self, number: f64) -> Result<Item<'a>, E> {
        let number = serde_json::Number::from_f64(number);
        Ok(Item::Figure(number.map_or(Figure::None, Figure::Number)))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Item<'a>, E> {
        Ok(Item::Figure(Figure::None))
    }
    fn visit_unit<E>(self) -> Result<Item<'a>, E> {
        Ok(Item::Figure(Figure::None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Item<'a>, A::Error> {
        IgnoredAny.visit_seq(seq)?;
        Ok(Item::Figure(Figure::None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item<'a>, A::Error> {
        if !self.agents {
            IgnoredAny.visit_map(map)?;
            return Ok(Item::Figure(Figure::None));
        }
        let mut agent = AgentDay::default();
        while let Some(Key(key)) = map.next_key()? {
            match key.as_ref() {
                "calls" => agent.calls = map.next_value()?,
                "overall" => agent.overall = map.next_value()?,
                _ => {
                    let stats: Stats = map.next_value()?;
                    agent.categories.push((key, stats.hitmiss));
                }
            }
        }
        Ok(Item::Agent(agent))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Figure<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = ReadItem {
            agents: false,
            read: PhantomData,
        };
        Ok(match deserializer.deserialize_any(read)? {
            Item::Figure(figure) => figure,
            Item::Agent(_) => Figure::None,
        })
    }
}

/// A key of the answer: borrowed from it unless the JSON escaped something in it.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Read;
        impl<'de> Visitor<'de> for Read {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(text.to_string())))
            }
        }
        deserializer.deserialize_str(Read)
    }
}

/// The figures of a stats object (`overall` or a category) that the page shows.
#[derive(Debug, Default, Deserialize)]
pub struct Stats<'a> {
    #[serde(borrow, default)]
    pub hitmiss: Figure<'a>,
    #[serde(borrow, default)]
    pub coverage: Figure<'a>,
}

/// An agent's figures of a day.
#[derive(Debug, Default)]
pub struct AgentDay<'a> {
    pub agent: Cow<'a, str>,
    pub calls: Figure<'a>,
    pub overall: Stats<'a>,
    /// Each category the API returned, in its order, with its hit/miss.
    pub categories: Vec<(Cow<'a, str>, Figure<'a>)>,
}

impl<'a> AgentDay<'a> {
    /// The category's hit/miss, if the API gave one.
    pub fn hitmiss(&self, category: &str) -> &Figure<'a> {
        static NONE: Figure<'static> = Figure::None;
        self.categories
            .iter()
            .find(|(name, _)| name == category)
            .map_or(&NONE, |(_, hitmiss)| hitmiss)
    }
}

/// A day of the answer.
#[derive(Debug, Default)]
pub struct AppDay<'a> {
    pub date: Figure<'a>,
    pub agents: Vec<AgentDay<'a>>,
}

/// An agent's object, or `None` for a key of a day whose value is not one.
struct MaybeAgent<'a>(Option<AgentDay<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeAgent<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = ReadItem {
            agents: true,
            read: PhantomData,
        };
        Ok(MaybeAgent(match deserializer.deserialize_any(read)? {
            Item::Agent(agent) => Some(agent),
            Item::Figure(_) => None,
        }))
    }
}

impl<'de> Deserialize<'de> for AppDay<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Read;
        impl<'de> Visitor<'de> for Read {
            type Value = AppDay<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a day of /appstats")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut day = AppDay::default();
                while let Some(Key(key)) = map.next_key()? {
                    match key.as_ref() {
                        "date" => day.date = map.next_value()?,
                        "agents" => {
                            map.next_value::<IgnoredAny>()?;
                        }
                        _ => {
                            if let MaybeAgent(Some(mut agent)) = map.next_value()? {
                                agent.agent = key;
                                day.agents.push(agent);
                            }
                        }
                    }
                }
                Ok(day)
            }
        }
        deserializer.deserialize_map(Read)
    }
}

/// Reads an `/appstats` answer.
pub fn read(answer: &[u8]) -> Result<Vec<AppDay<'_>>, serde_json::Error> {
    serde_json::from_slice(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(figure: &Figure) -> String {
        figure.text()
    }

    #[test]
    fn the_shown_figures_are_kept_as_written_and_the_rest_skipped() {
        let answer = br#"[{"date": "20261120", "agents": 2,
            "a1": {"calls": 2, "overall": {"ncalls": 2, "hitmiss": "1.0000", "coverage": "0.7500",
                   "duration": "0:05:00"},
                   "Sales": {"ncalls": 1, "hitmiss": "0.5000", "coverage": "0.5000"},
                   "Sales.Up\u0073ell": {"hitmiss": 0.25}},
            "a\"2": {"calls": 1, "overall": {"hitmiss": null}}}]"#;
        let days = read(answer).unwrap();
        assert_eq!(days.len(), 1);
        let day = &days[0];
        assert_eq!(text(&day.date), "20261120");
        assert_eq!(day.agents.len(), 2);
        let a1 = &day.agents[0];
        assert_eq!(a1.agent, "a1");
        assert_eq!(text(&a1.calls), "2");
        assert_eq!(text(&a1.overall.hitmiss), "1.0000");
        assert_eq!(text(&a1.overall.coverage), "0.7500");
        assert_eq!(text(a1.hitmiss("Sales")), "0.5000");
        assert_eq!(text(a1.hitmiss("Sales.Upsell")), "0.25", "an escaped key");
        assert_eq!(text(a1.hitmiss("Greeting")), "", "a category left out");
        let a2 = &day.agents[1];
        assert_eq!(a2.agent, "a\"2");
        assert_eq!(a2.overall.hitmiss, Figure::None);
        assert_eq!(text(&a2.overall.coverage), "");
    }

    #[test]
    fn what_is_not_an_agent_is_not_read_as_one() {
        let days =
            read(br#"[{"agents": 1, "date": "20261120", "odd": 3, "a1": {"calls": 1}}]"#).unwrap();
        let agents: Vec<_> = days[0].agents.iter().map(|a| a.agent.as_ref()).collect();
        assert_eq!(agents, ["a1"]);
        assert!(read(b"[{\"date\": ").is_err());
    }

    #[test]
    fn figures_are_escaped_in_a_page() {
        let figure = Figure::Text("<b>".into());
        assert_eq!(
            maud::html! { td { (figure) } }.into_string(),
            "<td>&lt;b&gt;</td>"
        );
    }
}
