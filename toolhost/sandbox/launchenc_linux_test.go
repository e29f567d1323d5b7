package sandbox

import (
	"reflect"
	"testing"
)

// TestLaunchEncodingCarriesEveryField: a launch with every field of
// launch and policy set (filled by reflection, so a field added later is
// set too) comes out of decodeLaunch as it went into encodeLaunch. A
// field the encoding does not know arrives empty and fails this test:
// add it to encodeLaunch and decodeLaunch.
func TestLaunchEncodingCarriesEveryField(t *testing.T) {
	var l launch
	fillEvery(t, reflect.ValueOf(&l).Elem(), "launch")
	l.Fds = append(l.Fds, -1) // a closed fd
	got, err := decodeLaunch(encodeLaunch(nil, &l))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, &l) {
		t.Fatalf("the launch changed on its way:\n got %+v\nwant %+v\n got policy %+v\nwant policy %+v", got, &l, got.Policy, l.Policy)
	}

	// A cold launch: no policy fields beyond the grants, no environment
	// (the launcher's own), and an empty one that must not read as none.
	for _, l := range []launch{
		{Policy: &policy{Grants: []Grant{{Path: "/"}}}, Path: "/bin/true", Args: []string{"true"}},
		{Policy: &policy{}, Path: "/bin/true", Args: []string{"true"}, Env: []string{}},
	} {
		got, err := decodeLaunch(encodeLaunch(nil, &l))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, &l) {
			t.Errorf("got %+v (env nil: %v), want %+v (env nil: %v)", got, got.Env == nil, l, l.Env == nil)
		}
	}
}

// TestLaunchDecodingRefusesDamage: every cut of an encoded launch, one
// with a byte more, one of another build and counts larger than the data
// are refused without a panic or an allocation of what they claim.
func TestLaunchDecodingRefusesDamage(t *testing.T) {
	var l launch
	fillEvery(t, reflect.ValueOf(&l).Elem(), "launch")
	data := encodeLaunch(nil, &l)
	for n := range len(data) {
		if _, err := decodeLaunch(data[:n]); err == nil {
			t.Fatalf("a launch cut at %d of %d bytes was read", n, len(data))
		}
	}
	if _, err := decodeLaunch(append(data[:len(data):len(data)], 0)); err == nil {
		t.Error("a launch with a trailing byte was read")
	}
	other := append([]byte("vcpL0"), data[len(launchMagic):]...)
	if _, err := decodeLaunch(other); err == nil {
		t.Error("a launch of another encoding was read")
	}
	huge := append([]byte(launchMagic), 1, 0xff, 0xff, 0xff, 0xff, 0x0f) // 2^32-1 grants
	if _, err := decodeLaunch(huge); err == nil {
		t.Error("a count beyond the data was read")
	}
	notBool := append([]byte(launchMagic), 2)
	if _, err := decodeLaunch(notBool); err == nil {
		t.Error("a presence flag of 2 was read")
	}
}

// fillEvery sets every field reachable from v to a value other than its
// zero: slices and maps get one element, pointers a value.
func fillEvery(t *testing.T, v reflect.Value, name string) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(len(name)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(len(name)))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillEvery(t, v.Index(0), name+"[0]")
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillEvery(t, k, name+".key")
		fillEvery(t, e, name+".value")
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillEvery(t, v.Elem(), name)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				t.Fatalf("%s.%s: an unexported field the launch encoding cannot see", name, f.Name)
			}
			fillEvery(t, v.Field(i), name+"."+f.Name)
		}
	default:
		t.Fatalf("%s: a %s, which the launch encoding has no form for", name, v.Kind())
	}
}
