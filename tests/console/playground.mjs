// The browser test's playground steps: tools called through the MCP endpoint (a form in
// schema order with required properties first, a boolean left unset, 500 tools found by
// search), an elicitation round accepted, declined and cancelled, prompts and resources.
import { check, readableText, sleep, step, until } from "./lib.mjs";

/** Picks `name` of the current kind: typed into the search when there is one, then selected. */
export async function pick(page, value, query = value) {
  const search = page.locator("#pg-search");
  if (await search.count()) {
    await search.fill(query);
    await sleep(100);
  }
  const picker = (await page.locator("#pg-pick").count()) ? "#pg-pick" : "#pg-tool";
  await page.selectOption(picker, value);
}

/** Shows `kind` (tools, prompts, resources) in the playground. */
async function kind(page, what) {
  await page.check(`#pg-what-${what}`, { timeout: 3000 });
}

const exchange = (page) => page.textContent("#exchange");

/** The JSON object the survey tool's upstream got, from the result shown. */
async function surveyGot(page) {
  await page.waitForSelector("#result :text('got')");
  const text = await page.textContent("#result");
  const m = text.match(/"got":\s*(\{[^}]*\})/);
  return m ? JSON.parse(m[1]) : null;
}

export async function playgroundSteps({ page, open, shot, axe }) {
  await step("playground: echo, and greet's elicitation answered", async () => {
    await open(page, "playground");
    await pick(page, "echo");
    await page.fill("#pg-form input[name=text]", "hello from the console");
    await page.click("#pg-form button[type=submit]");
    await page.waitForSelector("#result-text");
    check((await page.textContent("#result-text")) === "hello from the console", "the playground calls echo through the MCP endpoint");
    const raw = await exchange(page);
    check(raw.includes('"mcp-method": "tools/call"') && raw.includes("io.modelcontextprotocol/protocolVersion"), "the raw exchange shows the request's headers and _meta");
    await readableText(page, "Playground with echo's form");
    await pick(page, "greet");
    await page.click("#pg-form button[type=submit]");
    await page.waitForSelector("#round-form");
    check((await exchange(page)).includes('"resultType": "input_required"'), "greet asks for input (input_required)");
    await readableText(page, "Playground with an elicitation form");
    await page.fill("#round-form input[name=name]", "Ada");
    await shot(page, "playground-elicitation");
    await axe("Playground (elicitation round)");
    await page.click("#round-form button[type=submit]");
    await page.waitForSelector("#result-text:has-text('Hello, Ada!')");
    const rounds = await exchange(page);
    // The retry answers the question by its key; requestState goes back whenever the server sent one.
    const sentState = /"resultType": "input_required"[\s\S]*"requestState"/.test(rounds);
    check(/"inputResponses": \{\s*"user_name"/.test(rounds) && (!sentState || /"requestState"[\s\S]*"inputResponses"|"inputResponses"[\s\S]*"requestState"/.test(rounds.split("--- request").pop())),
      "the retry carried the answer in inputResponses (and requestState when sent); the result: Hello, Ada!");
    await shot(page, "playground");
  });

  await step("playground: decline and cancel are distinct answers", async () => {
    await pick(page, "greet");
    await page.click("#pg-form button[type=submit]");
    await page.waitForSelector("#round-form");
    await page.locator("#round-form").getByRole("button", { name: "Decline", exact: true }).click({ timeout: 3000 });
    await until("the raw exchange shows a decline sent", 5, async () => /"action": "decline"/.test(await exchange(page)));
    const declined = /"user_name": \{\s*"action": "decline"\s*\}/.test(await exchange(page));
    // The server may end the call on a decline, or ask again: cancel the next round either way.
    await sleep(300);
    if (!(await page.locator("#round-form").count())) {
      await page.click("#pg-form button[type=submit]");
      await page.waitForSelector("#round-form");
    }
    await page.locator("#round-form").getByRole("button", { name: "Cancel", exact: true }).click({ timeout: 3000 });
    const cancelled = await until("the raw exchange shows a cancel sent", 5, async () => /"user_name": \{\s*"action": "cancel"\s*\}/.test(await exchange(page)));
    check(declined && cancelled, "Decline and Cancel send distinct answers (action decline, action cancel)");
    await page.waitForFunction(() => !/Waiting for your answer/.test(document.getElementById("result").textContent) || document.getElementById("round-form"));
    await readableText(page, "Playground after a cancelled round");
  });

  await step("playground: a form in schema order, required first, with a boolean left unset", async () => {
    await pick(page, "survey");
    const labels = await page.locator("#pg-form fieldset label").allTextContents();
    check(/^Zulu id/.test(labels[0] || ""), `the required property comes first (labels: ${labels.join(", ")})`);
    await readableText(page, "Playground with survey's form (a property without description)");
    await page.fill("#pg-form [name=zulu_id]", "z1");
    await page.click("#pg-form button[type=submit]");
    const unset = await surveyGot(page);
    check(unset && unset.zulu_id === "z1" && !("verbose" in unset), `an optional boolean left unset is left out (sent: ${JSON.stringify(unset)})`);
    await page.selectOption("#pg-form [name=verbose]", "false", { timeout: 3000 });
    await page.click("#pg-form button[type=submit]");
    await page.waitForFunction(() => /"verbose":\s*false/.test(document.getElementById("result").textContent));
    const off = await surveyGot(page);
    check(off && off.verbose === false, `the boolean set to false is sent as false (sent: ${JSON.stringify(off)})`);
  });

  await step("playground: 500 tools, found by search and called", async () => {
    const search = page.locator("#pg-search");
    check((await search.count()) === 1, "the playground has a tool search");
    await search.fill("0427", { timeout: 3000 });
    await sleep(150);
    const options = await page.locator("#pg-pick option").evaluateAll((os) => os.map((o) => o.value));
    check(options.length === 1 && options[0] === "bulk_0427", `typing '0427' narrows the tool list to bulk_0427 (got ${options.slice(0, 5).join(", ")})`);
    await page.selectOption("#pg-pick", "bulk_0427");
    await page.click("#pg-form button[type=submit]");
    await page.waitForSelector("#result :text('/bulk/427')");
    check(true, "bulk_0427, found by search, is called from the playground (its upstream got /bulk/427)");
  });

  await step("playground: a prompt with its arguments", async () => {
    await kind(page, "prompts");
    await pick(page, "ev_args-prompt", "args");
    await page.fill("#pg-form [name=city]", "Paris");
    await page.click("#pg-form button[type=submit]");
    await page.waitForSelector("#result :text('Paris')");
    check((await exchange(page)).includes('"method": "prompts/get"'), "the playground gets a prompt with its arguments (prompts/get)");
    await readableText(page, "Playground with a prompt's messages");
    await shot(page, "playground-prompt");
  });

  await step("playground: a resource, and a template with its variable", async () => {
    await kind(page, "resources");
    await pick(page, "demo://readme", "readme");
    await page.click("#pg-form button[type=submit]");
    await until("the readme is read", 5, async () => (await exchange(page)).includes('"uri": "demo://readme"') && (await page.locator("#result pre, #result p.ok").count()) > 0);
    check(!(await page.locator("#result .bad").count()), "the playground reads a listed resource (resources/read)");
    await pick(page, "demo://resource/dynamic/text/{resourceId}", "dynamic text");
    await page.fill("#pg-form [name=resourceId]", "7");
    await page.click("#pg-form button[type=submit]");
    const read = await until("the template is read with its variable filled in", 5, async () => (await exchange(page)).includes('"uri": "demo://resource/dynamic/text/7"') && (await page.locator("#result pre").count()) > 0);
    if (read) check(!(await page.locator("#result .bad").count()), "the playground reads a resource template with its variable (demo://resource/dynamic/text/7)");
    await readableText(page, "Playground with a resource read");
    await shot(page, "playground-resource");
    await axe("Playground (resources)");
    await kind(page, "tools");
  });
}
