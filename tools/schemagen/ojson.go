package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// object is a JSON object that keeps its keys in order, so a file written
// by hand keeps its layout when the generator replaces parts of it.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) any { return o.vals[k] }

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// decode reads one JSON value, objects as *object, numbers as json.Number.
func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := d.Token()
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// encode writes v as JSON indented by two spaces, objects in key order.
func encode(w *strings.Builder, v any, indent string) error {
	switch v := v.(type) {
	case *object:
		if len(v.keys) == 0 {
			w.WriteString("{}")
			return nil
		}
		w.WriteString("{\n")
		for i, k := range v.keys {
			w.WriteString(indent + "  ")
			if err := encode(w, k, ""); err != nil {
				return err
			}
			w.WriteString(": ")
			if err := encode(w, v.vals[k], indent+"  "); err != nil {
				return err
			}
			if i < len(v.keys)-1 {
				w.WriteString(",")
			}
			w.WriteString("\n")
		}
		w.WriteString(indent + "}")
	case []any:
		if len(v) == 0 {
			w.WriteString("[]")
			return nil
		}
		w.WriteString("[\n")
		for i, e := range v {
			w.WriteString(indent + "  ")
			if err := encode(w, e, indent+"  "); err != nil {
				return err
			}
			if i < len(v)-1 {
				w.WriteString(",")
			}
			w.WriteString("\n")
		}
		w.WriteString(indent + "]")
	default:
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			return err
		}
		w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	return nil
}

// toOrdered converts a value marshalled by encoding/json (whose struct
// fields come in declaration order) into the ordered form.
func toOrdered(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decode(b)
}
