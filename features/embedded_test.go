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
