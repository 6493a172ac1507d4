//! The emotion of a speaker over a call (docs/figures.md, Emotion), from VADER, a lexicon and rule based
//! sentiment model that ships its lexicons inside the crate and so runs offline. Each of the speaker's
//! turns gets VADER's compound score (-1 to 1); the call is split in two halves at the middle of its
//! turns, and the mean of the speaker's turns in the second half is compared with the mean in the first.

use std::sync::OnceLock;

use vader_parity::SentimentIntensityAnalyzer;

use crate::model::utterances::{Speaker, Utterance};
use crate::model::Emotion;

/// How far the mean of the second half must move from the first's for the call to be improving or
/// worsening (a quarter of the compound's range).
pub const CHANGE: f64 = 0.5;
/// VADER's own bounds of neutral text: a mean compound at or above this is positive, at or below its
/// negation negative.
pub const POLARITY: f64 = 0.05;

fn analyzer() -> &'static SentimentIntensityAnalyzer {
    static ANALYZER: OnceLock<SentimentIntensityAnalyzer> = OnceLock::new();
    ANALYZER.get_or_init(SentimentIntensityAnalyzer::new)
}

/// VADER's compound score of a text, from -1 (most negative) to 1 (most positive); 0 for text with no
/// sentiment.
pub fn compound(text: &str) -> f64 {
    analyzer().polarity_scores(text).compound
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The emotion of `speaker` over the call: improving or worsening when both halves have turns of the
/// speaker and the second half's mean compound is at least `CHANGE` above or below the first half's;
/// else positive or negative by the mean over all the speaker's turns; else None (neutral, or the
/// speaker said nothing). A turn is in the first half when its midpoint is before the middle of the call
/// (halfway between the start of the first turn and the end of the last, whoever speaks).
pub fn emotion(utterances: &[Utterance], speaker: Speaker) -> Option<Emotion> {
    let begin = utterances
        .iter()
        .map(|u| u.start)
        .fold(f64::INFINITY, f64::min);
    let end = utterances
        .iter()
        .map(|u| u.end)
        .fold(f64::NEG_INFINITY, f64::max);
    let middle = (begin + end) / 2.0;
    let (mut first, mut second, mut all) = (Vec::new(), Vec::new(), Vec::new());
    for u in utterances.iter().filter(|u| u.speaker == speaker) {
        let score = compound(&u.text);
        all.push(score);
        if (u.start + u.end) / 2.0 < middle {
            first.push(score);
        } else {
            second.push(score);
        }
    }
    classify(mean(&first), mean(&second), mean(&all)?)
}

/// The rule of `emotion` over the means of the halves (None: no turn in that half) and of all turns.
pub fn classify(first: Option<f64>, second: Option<f64>, overall: f64) -> Option<Emotion> {
    if let (Some(first), Some(second)) = (first, second) {
        let change = second - first;
        if change >= CHANGE {
            return Some(Emotion::Improving);
        }
        if change <= -CHANGE {
            return Some(Emotion::Worsening);
        }
    }
    if overall >= POLARITY {
        Some(Emotion::Positive)
    } else if overall <= -POLARITY {
        Some(Emotion::Negative)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(speaker: Speaker, start: f64, end: f64, text: &str) -> Utterance<'_> {
        Utterance {
            speaker,
            start,
            end,
            text: text.into(),
            words: None,
        }
    }

    #[test]
    fn vader_scores_whole_turns() {
        // Values of the VADER 3.3.2 reference for these texts.
        assert_eq!(compound("VADER is smart, handsome, and funny."), 0.8316);
        assert_eq!(compound("thank you, that is great"), 0.765);
        assert_eq!(compound("this is terrible, I am very angry"), -0.7713);
        assert_eq!(compound("hello"), 0.0);
    }

    #[test]
    fn the_rule_on_means() {
        use Emotion::*;
        // Halves -0.6 and 0.2: a change of 0.8 is improving, whatever the overall mean.
        assert_eq!(classify(Some(-0.6), Some(0.2), -0.2), Some(Improving));
        // Exactly the threshold counts.
        assert_eq!(classify(Some(0.5), Some(0.0), 0.25), Some(Worsening));
        // A change of 0.3 is not enough: by the overall mean.
        assert_eq!(classify(Some(0.1), Some(0.4), 0.25), Some(Positive));
        assert_eq!(classify(None, Some(-0.4), -0.4), Some(Negative));
        assert_eq!(classify(Some(0.01), Some(0.03), 0.02), None);
    }

    #[test]
    fn a_client_who_calms_down_improves_and_an_agent_stays_positive() {
        use Speaker::*;
        // The turns span 0 to 40 s: the middle is 20 s.
        let call = [
            turn(Agent, 0.0, 4.0, "thank you, that is great"), // first half, 0.765
            turn(Client, 5.0, 10.0, "this is terrible, I am very angry"), // first, -0.7713
            turn(Agent, 12.0, 16.0, "hello"),                  // first, 0
            turn(Client, 22.0, 30.0, "thank you, that is great"), // second, 0.765
            turn(Agent, 32.0, 40.0, "thank you, that is great"), // second, 0.765
        ];
        // Client: -0.7713 then 0.765, a change of 1.5363: improving.
        assert_eq!(emotion(&call, Client), Some(Emotion::Improving));
        // Agent: first half mean 0.3825, second 0.765, change 0.3825 < 0.5; overall mean
        // (0.765 + 0 + 0.765) / 3 = 0.51: positive.
        assert_eq!(emotion(&call, Agent), Some(Emotion::Positive));
        // Reversed halves: the client's mood falls by 1.5363.
        let reversed = [
            turn(Client, 0.0, 4.0, "thank you, that is great"),
            turn(Client, 30.0, 40.0, "this is terrible, I am very angry"),
        ];
        assert_eq!(emotion(&reversed, Client), Some(Emotion::Worsening));
        assert_eq!(emotion(&reversed, Agent), None, "the agent said nothing");
        let flat = [turn(Agent, 0.0, 4.0, "hello")];
        assert_eq!(emotion(&flat, Agent), None, "neutral");
        assert_eq!(emotion(&[], Agent), None);
    }
}
