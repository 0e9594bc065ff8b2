package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func post(t *testing.T, handler http.Handler, path, body string) map[string]any {
	t.Helper()
	recorder := httptest.NewRecorder()
	handler.ServeHTTP(recorder, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	if recorder.Code != http.StatusOK {
		t.Fatalf("%s: status %d: %s", path, recorder.Code, recorder.Body.String())
	}
	var out map[string]any
	if err := json.NewDecoder(bytes.NewReader(recorder.Body.Bytes())).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConvertMovesEveryObjectToTheDesiredVersion(t *testing.T) {
	handler := httpdHandler("pod-a")
	out := post(t, handler, "/convert", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview",
		"request":{"uid":"u1","desiredAPIVersion":"example.com/v2","objects":[{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}]}}`)
	response := out["response"].(map[string]any)
	if response["uid"] != "u1" || response["result"].(map[string]any)["status"] != "Success" {
		t.Fatalf("response: %v", response)
	}
	object := response["convertedObjects"].([]any)[0].(map[string]any)
	if object["apiVersion"] != "example.com/v2" || object["spec"].(map[string]any)["convertedBy"] != "pod-a" {
		t.Fatalf("converted: %v", object)
	}
}

func TestAdmitRefusesOnlyWhatIsLabelledDeny(t *testing.T) {
	handler := httpdHandler("pod-a")
	review := func(labels string) map[string]any {
		return post(t, handler, "/admit", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
			"request":{"uid":"u2","object":{"metadata":{"name":"c","labels":`+labels+`}}}}`)["response"].(map[string]any)
	}
	if allowed := review(`{}`); allowed["allowed"] != true || allowed["uid"] != "u2" {
		t.Fatalf("unlabelled: %v", allowed)
	}
	denied := review(`{"deny":"true"}`)
	if denied["allowed"] != false || !strings.Contains(denied["status"].(map[string]any)["message"].(string), "pod-a") {
		t.Fatalf("labelled deny: %v", denied)
	}
	recorder := httptest.NewRecorder()
	handler.ServeHTTP(recorder, httptest.NewRequest(http.MethodGet, "/requests", nil))
	if strings.TrimSpace(recorder.Body.String()) != "2" {
		t.Fatalf("requests counted: %q", recorder.Body.String())
	}
}
