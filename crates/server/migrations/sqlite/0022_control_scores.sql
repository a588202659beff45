-- The samples a controls analysis scored (its control's batch): their pages mark the taxa it
-- calls contaminants. Rows go with the analysis or the sample.
CREATE TABLE control_scored (
    sample_id   TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    analysis_id TEXT NOT NULL REFERENCES analyses(id) ON DELETE CASCADE,
    PRIMARY KEY (sample_id, analysis_id)
) STRICT;
CREATE INDEX control_scored_analysis ON control_scored(analysis_id);
