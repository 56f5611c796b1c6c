"""Framework integrations: one subpackage per framework, each an optional extra."""
