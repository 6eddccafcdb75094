package features

import "testing"

func TestEmbeddedIsTheSource(t *testing.T) {
	source, err := ReadMetadata("..")
	if err != nil {
		t.Fatal(err)
	}
	if got := Embedded(); got != source {
		t.Errorf("Embedded() = %+v, the source says %+v", got, source)
	}
}

func TestEmbeddedOptions(t *testing.T) {
	o := EmbeddedOptions()
	if got := o["network"]; got.Default != "allowlist" || len(got.Enum) != 2 {
		t.Errorf("network = %+v, want the default allowlist of two modes", got)
	}
	if got := o["noForge"]; got.Type != "boolean" || got.Default != false {
		t.Errorf("noForge = %+v, want a boolean, default false", got)
	}
}
