// The hosted page's own script: steps, live logic and checks, saved answers, upload progress and
// one submission per page view. Without it the page still works: every step on one page, posted
// as a plain form, checked by the server.
import { describeProblem, fieldError, hiddenFieldIds, nextStep } from "./answer-rules.js";

const form = document.querySelector("form[data-form]");
const data = JSON.parse(document.getElementById("form-data")?.textContent ?? "null");

if (form && data) enhance(form, data);

function enhance(form, data) {
  const fields = data.fields;
  const byId = new Map(fields.map((field) => [field.id, field]));
  const steps = [...form.querySelectorAll("[data-step]")];
  const stepFields = steps.map((step) =>
    [...step.querySelectorAll("[data-field]")].map((f) => f.dataset.field),
  );
  const [back, next] = [form.querySelector("[data-back]"), form.querySelector("[data-next]")];
  const submit = form.querySelector("button[type=submit]");
  const stepper = form.querySelector("[data-stepper]");
  const progress = form.querySelector("[data-progress]");
  const storageKey = `formdeck:${data.id}`;
  // The rules number steps as the intake does, from an empty first step when the form opens
  // with a page break; the page shows no such step.
  const stepOffset = fields[0]?.subtype === "page" ? 1 : 0;
  const visited = [];
  let current = 0;
  let sending = false;

  form.classList.add("js");
  form.noValidate = true;

  /**
   * What the form holds, as the intake's rules read a submission: each answer (a string, or the
   * chosen values of a checkbox group) and the file fields that have a file.
   */
  function submitted() {
    const answers = {};
    const fileFieldIds = new Set();
    for (const field of fields) {
      const controls = form.elements.namedItem(field.id);
      if (!controls) continue;
      if (field.type === "checkbox") {
        answers[field.id] = [
          ...form.querySelectorAll(`[name="${CSS.escape(field.id)}"]:checked`),
        ].map((c) => c.value);
      } else if (field.type === "file") {
        if (controls.files?.length) fileFieldIds.add(field.id);
      } else {
        answers[field.id] = controls.value ?? "";
      }
    }
    return { answers, fileFieldIds };
  }

  /** The step Next leads to from the page's step `index`, or null where the form ends. */
  function stepAfter(index) {
    const target = nextStep(fields, submitted(), index + stepOffset);
    return target === null ? null : target - stepOffset;
  }

  const stepOfField = (id) => stepFields.findIndex((ids) => ids.includes(id));

  /** Shows and hides fields as the logic says; a hidden field's controls are not sent. */
  function applyLogic() {
    const hidden = hiddenFieldIds(fields, submitted());
    for (const element of form.querySelectorAll("[data-field]")) {
      const isHidden = hidden.has(element.dataset.field);
      element.hidden = isHidden;
      for (const control of element.querySelectorAll("input,select,textarea"))
        control.disabled = isHidden;
    }
    return hidden;
  }

  function showError(field, message) {
    const container = form.querySelector(`[data-field="${CSS.escape(field.id)}"]`);
    const error = document.getElementById(`${field.id}-error`);
    if (!container || !error) return;
    error.textContent = message ? describeProblem(message) : "";
    for (const control of container.querySelectorAll("input,select,textarea")) {
      if (message) control.setAttribute("aria-invalid", "true");
      else control.removeAttribute("aria-invalid");
      const described = new Set(
        (control.getAttribute("aria-describedby") ?? "").split(" ").filter(Boolean),
      );
      if (message && (control.id === field.id || container.tagName !== "FIELDSET"))
        described.add(error.id);
      else if (!message) described.delete(error.id);
      if (described.size) control.setAttribute("aria-describedby", [...described].join(" "));
      else control.removeAttribute("aria-describedby");
    }
  }

  /** Checks the fields of the given steps; focuses the first wrong one. True when all are right. */
  function check(stepIndexes) {
    const { answers, fileFieldIds } = submitted();
    const hidden = applyLogic();
    let firstWrong = null;
    for (const field of fields) {
      if (hidden.has(field.id) || !stepIndexes.includes(stepOfField(field.id))) continue;
      const message = fieldError(field, answers[field.id], fileFieldIds.has(field.id));
      showError(field, message);
      if (message && !firstWrong) firstWrong = field;
    }
    if (firstWrong) document.getElementById(firstWrong.id)?.focus();
    return firstWrong === null;
  }

  function showStep(index, focus) {
    current = index;
    steps.forEach((step, i) => {
      step.hidden = i !== index;
    });
    const last = index === steps.length - 1 || stepAfter(index) === null;
    back.hidden = visited.length === 0;
    next.hidden = last;
    if (submit) submit.hidden = !last;
    stepper.hidden = false;
    stepper.textContent = `Step ${index + 1} of ${steps.length}`;
    if (focus) steps[index].querySelector("h2,input,select,textarea")?.focus?.();
  }

  if (steps.length > 1) {
    for (const step of steps) step.querySelector("h2")?.setAttribute("tabindex", "-1");
    next.addEventListener("click", () => {
      if (!check([current])) return;
      const target = stepAfter(current);
      if (target === null) return;
      visited.push(current);
      showStep(target, true);
    });
    back.addEventListener("click", () => {
      // After a jump, Back returns to the step jumped from, not to the skipped one.
      if (visited.length > 0) showStep(visited.pop(), true);
    });
    showStep(0, false);
  }

  function save() {
    if (!data.saveAnswers) return;
    const saved = {};
    const { answers } = submitted();
    for (const field of fields) {
      if (field.type === "file") continue;
      const value = answers[field.id];
      if (value !== undefined && value !== "" && !(Array.isArray(value) && value.length === 0))
        saved[field.id] = value;
    }
    try {
      localStorage.setItem(storageKey, JSON.stringify(saved));
    } catch {
      // Storage full or refused (private mode): answers are simply not kept.
    }
  }

  function restore() {
    // A page the server sent back with answers already shows what was typed.
    if (!data.saveAnswers || form.querySelector("#summary")) return;
    let saved = null;
    try {
      saved = JSON.parse(localStorage.getItem(storageKey) ?? "null");
    } catch {
      return;
    }
    if (!saved) return;
    for (const [id, value] of Object.entries(saved)) {
      const field = byId.get(id);
      if (!field || field.type === "file") continue;
      const values = Array.isArray(value) ? value : [String(value)];
      for (const control of form.querySelectorAll(`[name="${CSS.escape(id)}"]`)) {
        if (control.type === "radio" || control.type === "checkbox")
          control.checked = values.includes(control.value);
        else control.value = values[0] ?? "";
      }
    }
  }

  function forget() {
    try {
      localStorage.removeItem(storageKey);
    } catch {
      // Nothing was kept.
    }
  }

  /** Sends the form once; the server's refusal names a field, shown beside it. */
  function send() {
    sending = true;
    submit.disabled = true;
    const body = new FormData(form);
    const request = new XMLHttpRequest();
    request.open("POST", form.action);
    request.setRequestHeader("Accept", "application/json");
    const hasFiles = [...form.querySelectorAll("input[type=file]")].some(
      (input) => input.files?.length,
    );
    if (hasFiles) {
      progress.hidden = false;
      request.upload.addEventListener("progress", (event) => {
        if (event.lengthComputable) progress.value = Math.round((event.loaded / event.total) * 100);
      });
    }
    request.addEventListener("load", () => {
      if (request.status === 201) {
        forget();
        window.location.assign(data.next);
        return;
      }
      sending = false;
      submit.disabled = false;
      progress.hidden = true;
      let message = "Your answers could not be sent. Please try again.";
      try {
        message = JSON.parse(request.responseText).error.message;
      } catch {
        // Not our JSON: the general message stands.
      }
      const [name, reason] = message.split(/: (.*)/s);
      const field = byId.get(name);
      if (field && request.status === 422) {
        showError(field, reason);
        const step = stepOfField(field.id);
        if (steps.length > 1 && step >= 0 && step !== current) showStep(step, false);
        document.getElementById(field.id)?.focus();
      } else {
        showSummary(message);
      }
    });
    request.addEventListener("error", () => {
      sending = false;
      submit.disabled = false;
      progress.hidden = true;
      showSummary("The connection failed. Your answers are still here: please try again.");
    });
    request.send(body);
  }

  function showSummary(message) {
    let summary = form.querySelector("#summary");
    if (!summary) {
      summary = document.createElement("p");
      summary.id = "summary";
      summary.className = "summary";
      summary.setAttribute("role", "alert");
      form.querySelector(".actions").before(summary);
    }
    summary.textContent = message;
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (sending || !submit) return;
    const path = steps.length > 1 ? [...visited, current] : steps.map((_, i) => i);
    if (check(path)) send();
  });
  form.addEventListener("input", () => {
    applyLogic();
    if (steps.length > 1) showStep(current, false);
    save();
  });

  restore();
  applyLogic();
}
