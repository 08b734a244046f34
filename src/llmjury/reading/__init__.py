"""Reading judge answers: the judge's own words (`text`), where its decision stands and what
competes with it (`decisions`), and one reader per answer shape: a choice after a marker
(`choice`), a pair of scores (`score_pair`), a rating on a scale (`rating`), a JSON verdict
(`verdict_json`), in the words of every language read (`words`) and of the template that asked
(`declaration`). Families declare their options and scales; the rules live here, once."""
