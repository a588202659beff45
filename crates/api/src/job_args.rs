//! A job's arguments against its `job_args_schema`: defaults filled in and every problem named,
//! the same way in clients (before sending) and in the service (before queuing).

use serde_json::{Map, Value};

/// Fills the arguments `args` leaves out with the `default`s of the schema's top-level
/// `properties` (what `populate_default_arguments: true` asks of the service).
pub fn populate_default_args(schema: &Value, args: &mut Map<String, Value>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if let Some(d) = prop.get("default")
                && !args.contains_key(name)
            {
                args.insert(name.clone(), d.clone());
            }
        }
    }
}

/// A compiled `job_args_schema`, to check arguments against.
#[cfg(feature = "validate")]
pub struct JobArgsSchema {
    validator: jsonschema::Validator,
}

#[cfg(feature = "validate")]
impl JobArgsSchema {
    /// Compiles `schema`; the error says why it is not a usable JSON Schema.
    pub fn new(schema: &Value) -> Result<Self, String> {
        jsonschema::validator_for(schema)
            .map(|validator| JobArgsSchema { validator })
            .map_err(|e| format!("job_args_schema is not a valid JSON Schema: {e}"))
    }

    /// Every way `args` breaks the schema, each with its place (`/confidence: 2 is greater than
    /// the maximum of 1`); empty when the arguments fit.
    pub fn problems(&self, args: &Map<String, Value>) -> Vec<String> {
        let instance = Value::Object(args.clone());
        self.validator
            .iter_errors(&instance)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() { e.to_string() } else { format!("{at}: {e}") }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 0},
                "min_hits": {"type": "integer", "default": 2},
                "tax_id": {"type": "string"}
            },
            "additionalProperties": false
        })
    }

    #[test]
    fn defaults_fill_only_what_is_missing() {
        let mut args = Map::new();
        args.insert("confidence".into(), json!(0.5));
        populate_default_args(&schema(), &mut args);
        assert_eq!(Value::Object(args), json!({"confidence": 0.5, "min_hits": 2}));
    }

    #[cfg(feature = "validate")]
    #[test]
    fn every_problem_is_named_with_its_place() {
        let check = JobArgsSchema::new(&schema()).unwrap();
        let mut args = Map::new();
        assert!(check.problems(&args).is_empty());
        args.insert("confidence".into(), json!(2));
        args.insert("colour".into(), json!("red"));
        let problems = check.problems(&args);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("/confidence: ")), "{problems:?}");
        assert!(JobArgsSchema::new(&json!({"type": 12})).is_err());
    }
}
