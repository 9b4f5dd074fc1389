"""Banco de respuestas del módulo 06 · PPO."""

from tests.banks import Answer

MODULE = "06_ppo"

WRONG: dict[str, list[Answer]] = {
    "clipped_surrogate_loss": [
        Answer(
            "recorte sin el min",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    return -(torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantages).mean()
""",
            mistake="clip_without_min",
        ),
        Answer(
            "max en lugar de min",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.max(ratio * advantages, clipped * advantages).mean()
""",
            mistake="max_instead_of_min",
        ),
        Answer(
            "el min del lado equivocado con ventajas negativas",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    return -(torch.clamp(ratio, max=1 + clip_eps) * advantages).mean()
""",
            mistake="clip_upper_only",
        ),
        Answer(
            "sin el signo menos",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return torch.min(ratio * advantages, clipped * advantages).mean()
""",
            mistake="missing_minus_sign",
        ),
        Answer(
            "media sobre un solo eje",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean(dim=0)
""",
            mistake="not_a_scalar",
        ),
        Answer(
            "suma en lugar de media",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).sum()
""",
            mistake="sum_instead_of_mean",
        ),
        Answer(
            "sin recorte",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    return -(torch.exp(log_probs - old_log_probs.detach()) * advantages).mean()
""",
            mistake="no_clip",
        ),
        Answer(
            "los log π viejos arrastran gradiente",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp(log_probs - old_log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean()
""",
            mistake="gradient_to_old_log_probs",
            fails=("clipped_surrogate_loss_test_grad",),
        ),
    ],
    "kl_estimators": [
        Answer(
            "ρ invertida",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = log_probs - other_log_probs
    return (-log_rho).mean(), (torch.exp(log_rho) - 1 - log_rho).mean()
""",
            mistake="inverted_rho",
        ),
        Answer(
            "k3 sin el −1",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    return (-log_rho).mean(), (torch.exp(log_rho) - log_rho).mean()
""",
            mistake="k3_missing_minus_one",
        ),
        Answer(
            "k2 en lugar de k3",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    return (-log_rho).mean(), (0.5 * log_rho**2).mean()
""",
            mistake="k2_instead_of_k3",
        ),
        Answer(
            "k1 con el signo cambiado",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    return log_rho.mean(), (torch.exp(log_rho) - 1 - log_rho).mean()
""",
            mistake="k1_sign",
        ),
        Answer(
            "sin promediar",
            """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    return -log_rho, torch.exp(log_rho) - 1 - log_rho
""",
            mistake="kl_not_scalar",
        ),
    ],
    "ppo_minibatch_loss": [
        Answer(
            "sin normalizar las ventajas",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    log_probs = dist.log_prob(batch.actions[indices])
    policy = ppo.clipped_surrogate_loss(log_probs, batch.log_probs[indices],
                                        batch.advantages[indices], clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
            mistake="advantages_not_normalized",
        ),
        Answer(
            "desviación típica sesgada",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std(unbiased=False) + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv, clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
            mistake="biased_std",
        ),
        Answer(
            "normaliza con las cifras de todo el lote",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    all_adv = batch.advantages
    adv = (all_adv - all_adv.mean()) / (all_adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv[indices],
                                        clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
            mistake="normalized_with_whole_batch",
        ),
        Answer(
            "los logits como log-probabilidades",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    log_probs = logits.gather(1, batch.actions[indices].unsqueeze(1)).squeeze(1)
    entropy = torch.distributions.Categorical(logits=logits).entropy()
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(log_probs, batch.log_probs[indices], adv,
                                        clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * entropy.mean()
""",
            mistake="logits_as_log_probs",
        ),
        Answer(
            "el premio a la entropía sumando",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv, clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value + ent_coef * dist.entropy().mean()
""",
            mistake="entropy_sign",
        ),
        Answer(
            # El valor es el bueno: solo falla la celda del gradiente.
            "V(s) separada del grafo",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv, clip_eps)
    value = ((values.detach() - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
            mistake="critic_without_gradient",
            fails=("ppo_minibatch_loss_test_grad",),
        ),
        Answer(
            "la entropía sin gradiente",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    with torch.no_grad():
        entropy = dist.entropy().mean()
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv, clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * entropy
""",
            mistake="entropy_detached",
            fails=("ppo_minibatch_loss_test_grad",),
        ),
        Answer(
            # Modifica la entrada: el valor y el gradiente salen bien, pero
            # quien llama se queda con el lote cambiado (las dos celdas lo ven,
            # como en la pérdida recortada).
            "normaliza las ventajas dentro del lote",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    adv = batch.advantages[indices]
    batch.advantages[indices] = (adv - adv.mean()) / (adv.std() + 1e-8)
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices],
                                        batch.advantages[indices], clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
            mistake="modified_input",
        ),
        Answer(
            "la media de las ventajas con división entera",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    mean = adv.sum() // len(indices)
    adv = (adv - mean) / (adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv, clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
            mistake="wrong_loss",
        ),
    ],
    "ppo_update": [
        Answer(
            "baraja una sola vez",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    order = torch.randperm(len(batch), generator=generator)
    for epoch in range(n_epochs):
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
            mistake="shuffled_once",
        ),
        Answer(
            "sin barajar",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        for indices in torch.arange(len(batch)).split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
            mistake="not_shuffled",
        ),
        Answer(
            "pierde el minilote corto",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for k in range(len(batch) // minibatch_size):
            indices = order[k * minibatch_size:(k + 1) * minibatch_size]
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
            mistake="dropped_last_minibatch",
        ),
        Answer(
            "sin zero_grad",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
            mistake="missing_zero_grad",
        ),
        Answer(
            "baraja con la semilla global",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch))
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
            mistake="wrong_parameters",
        ),
        Answer(
            "normaliza las ventajas del lote en su sitio",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    batch.advantages -= batch.advantages.mean()
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
            mistake="modified_batch",
        ),
        Answer(
            "sin recortar el gradiente",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
            mistake="gradient_not_clipped",
            fails=("ppo_update_test_clip",),
        ),
        Answer(
            "recorta después del paso",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
            mistake="gradient_not_clipped",
            fails=("ppo_update_test_clip",),
        ),
        Answer(
            "recorta solo el actor",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.actor.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
            mistake="clipped_actor_only",
            fails=("ppo_update_test_clip",),
        ),
        Answer(
            "la KL con k1",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None:
            with torch.no_grad():
                new = agent.distribution(batch.obs).log_prob(batch.actions)
                k1, _ = kl_estimators(batch.log_probs, new)
            if k1 > target_kl:
                return epoch + 1
    return n_epochs
""",
            mistake="kl_with_k1",
            fails=("ppo_update_test_kl",),
        ),
        Answer(
            "la KL con los argumentos cambiados",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None:
            with torch.no_grad():
                new = agent.distribution(batch.obs).log_prob(batch.actions)
                _, k3 = kl_estimators(new, batch.log_probs)
            if k3 > target_kl:
                return epoch + 1
    return n_epochs
""",
            mistake="kl_reversed",
            fails=("ppo_update_test_kl",),
        ),
        Answer(
            "corta a mitad de la época",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
            if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
                return epoch + 1
    return n_epochs
""",
            mistake="stopped_midway",
            fails=("ppo_update_test_kl",),
        ),
        Answer(
            "no cuenta la época que dispara la parada",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch
    return n_epochs
""",
            mistake="epoch_not_counted",
            fails=("ppo_update_test_kl",),
        ),
        Answer(
            "devuelve las épocas como float",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    done = 0.0
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        done += 1
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            break
    return done
""",
            mistake="epochs_not_an_integer",
            fails=("ppo_update_test_kl",),
        ),
    ],
    # El cuestionario: la comprobación visible acepta cualquier respuesta bien
    # escrita, así que las erróneas bien escritas fallan en la prueba oculta, con
    # la explicación; las mal escritas, ya en la visible.
    "quiz_1": [
        Answer(
            "la acción no muestreada sin gradiente",
            "answer_1 = 0.0",
            mistake="unsampled_action_no_gradient",
        ),
        Answer(
            "la componente de la acción muestreada",
            "answer_1 = -0.3",
            mistake="sampled_action_component",
        ),
        Answer("el signo cambiado", "answer_1 = -0.12", mistake="flipped_sign"),
        Answer("sin la línea base", "answer_1 = 2 * -0.2", mistake="missing_baseline"),
        Answer("sin responder", "answer_1 = None", mistake="quiz_unanswered"),
        Answer(
            "con coma decimal, como texto",
            'answer_1 = "0,12"',
            mistake="number_as_text",
        ),
        Answer(
            "el gradiente entero",
            "answer_1 = torch.tensor([0.12, -0.3, 0.18])",
            mistake="several_numbers",
        ),
    ],
    "quiz_2": [
        Answer(
            "todas verdaderas",
            'answer_2 = {"a": True, "b": True, "c": True, "d": True}',
            mistake="statement_b",
        ),
        Answer(
            "la línea base que depende de la acción",
            'answer_2 = {"a": True, "b": False, "c": True, "d": True}',
            mistake="statement_c",
        ),
        Answer(
            "sin marcar",
            'answer_2 = {"a": None, "b": None, "c": None, "d": None}',
            mistake="statement_unmarked",
        ),
        Answer(
            "una lista en vez de un diccionario",
            "answer_2 = [True, False, False, True]",
            mistake="statements_not_a_dict",
        ),
    ],
    "quiz_3": [
        Answer(
            "la pérdida en vez del objetivo",
            "answer_3 = 2.2 / 3",
            mistake="loss_instead_of_objective",
        ),
        Answer(
            "sin recorte",
            "answer_3 = (1.3 * -2 + 1.5 * 1 + 0.7 * -1) / 3",
            mistake="missing_clip",
        ),
        Answer(
            "sin el min",
            "answer_3 = (1.2 * -2 + 1.2 * 1 + 0.8 * -1) / 3",
            mistake="missing_min",
        ),
        Answer("redondeado de más", "answer_3 = -0.7", mistake="quiz_wrong_number"),
        Answer("NaN", 'answer_3 = float("nan")', mistake="number_not_finite"),
    ],
    "quiz_4": [
        Answer(
            "k3 negativo",
            'answer_4 = {"a": True, "b": True, "c": True, "d": False}',
            mistake="statement_a",
        ),
        Answer(
            "todas falsas",
            'answer_4 = {"a": False, "b": False, "c": False, "d": False}',
            mistake="statement_b",
        ),
        Answer(
            "marcas como texto",
            'answer_4 = {"a": "F", "b": "V", "c": "V", "d": "F"}',
            mistake="statement_not_bool",
        ),
        Answer(
            "una clave en mayúscula",
            'answer_4 = {"A": False, "b": True, "c": True, "d": False}',
            mistake="statements_wrong_keys",
        ),
    ],
}

RIGHT: dict[str, list[Answer]] = {
    "clipped_surrogate_loss": [
        Answer(
            "por casos según el signo de A",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp(log_probs - old_log_probs.detach())
    upper = torch.clamp(ratio, max=1 + clip_eps)
    lower = torch.clamp(ratio, min=1 - clip_eps)
    terms = torch.where(advantages >= 0, upper * advantages, lower * advantages)
    return -terms.mean()
""",
        ),
        Answer(
            "con torch.minimum y reshape",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs).reshape(-1)
    adv = advantages.reshape(-1)
    low, high = 1.0 - clip_eps, 1.0 + clip_eps
    surrogate = torch.minimum(ratio * adv, ratio.clamp(low, high) * adv)
    return -surrogate.sum() / surrogate.numel()
""",
        ),
        Answer(
            "el máximo de las pérdidas",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = ppo.probability_ratio(log_probs, old_log_probs)
    loss1 = -advantages * ratio
    loss2 = -advantages * torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return torch.max(loss1, loss2).mean()
""",
        ),
    ],
    "kl_estimators": [
        Answer(
            "con ρ explícita",
            """
def kl_estimators(log_probs, other_log_probs):
    rho = torch.exp(other_log_probs - log_probs)
    k1 = torch.mean(log_probs - other_log_probs)
    k3 = torch.mean(rho - 1 - torch.log(rho))
    return k1, k3
""",
        ),
        Answer(
            "con NumPy y floats",
            """
def kl_estimators(log_probs, other_log_probs):
    lq = np.asarray(log_probs, dtype=float)
    lp = np.asarray(other_log_probs, dtype=float)
    log_rho = lp - lq
    return float(np.mean(-log_rho)), float(np.mean(np.expm1(log_rho) - log_rho))
""",
        ),
    ],
    "ppo_minibatch_loss": [
        Answer(
            "con log_softmax, todo en la celda",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    log_pi = torch.log_softmax(logits, dim=-1)
    taken = batch.actions[indices].unsqueeze(-1)
    log_probs = log_pi.gather(-1, taken).squeeze(-1)
    entropy = -(log_pi.exp() * log_pi).sum(dim=-1)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = torch.exp(log_probs - batch.log_probs[indices])
    surrogate = torch.min(ratio * adv,
                          torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * adv)
    value_loss = (values - batch.returns[indices]).pow(2).mean()
    return -surrogate.mean() + vf_coef * value_loss - ent_coef * entropy.mean()
""",
        ),
        Answer(
            "con std_mean, F.mse_loss y las cabezas por separado",
            """
import torch.nn.functional as F

def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    obs = batch.obs[indices]
    dist = agent.distribution(obs)
    std, mean = torch.std_mean(batch.advantages[indices])
    normalized = (batch.advantages[indices] - mean) / (std + 1e-8)
    policy_loss = clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                         batch.log_probs[indices], normalized,
                                         clip_eps)
    value_loss = F.mse_loss(agent.value(obs), batch.returns[indices])
    return policy_loss + vf_coef * value_loss - ent_coef * dist.entropy().mean()
""",
        ),
        Answer(
            # Sin doble penalización: su pérdida recortada está mal, pero este
            # ejercicio se califica con la de referencia en su lugar.
            "con una clipped_surrogate_loss mal escrita en la misma celda",
            """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    return (torch.exp(log_probs - old_log_probs) * advantages).mean()

def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                    batch.log_probs[indices], adv, clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
        ),
    ],
    "ppo_update": [
        Answer(
            "al estilo de CleanRL, con índices de inicio y fin",
            """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    size = len(batch)
    for epoch in range(n_epochs):
        b_inds = torch.randperm(size, generator=generator)
        for start in range(0, size, minibatch_size):
            end = start + minibatch_size
            mb_inds = b_inds[start:end]
            loss = ppo_minibatch_loss(agent, batch, mb_inds, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is None:
            continue
        with torch.no_grad():
            logits, _ = agent(batch.obs)
            newlogprob = torch.log_softmax(logits, dim=-1)[
                torch.arange(size), batch.actions
            ]
            logratio = newlogprob - batch.log_probs
            approx_kl = ((logratio.exp() - 1) - logratio).mean()
        if approx_kl.item() > target_kl:
            return epoch + 1
    return n_epochs
""",
        ),
        Answer(
            "con split, un paso escrito aparte y la KL de su ejercicio",
            """
def one_step(agent, optimizer, loss, max_grad_norm):
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(list(agent.parameters()), max_grad_norm)
    optimizer.step()


def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    done = 0
    for _ in range(n_epochs):
        for mb in torch.split(torch.randperm(len(batch), generator=generator),
                              minibatch_size):
            one_step(agent, optimizer,
                     ppo_minibatch_loss(agent, batch, mb, clip_eps, vf_coef,
                                        ent_coef),
                     max_grad_norm)
        done += 1
        if target_kl is not None:
            with torch.no_grad():
                now = agent.distribution(batch.obs).log_prob(batch.actions)
            if kl_estimators(batch.log_probs, now)[1] > target_kl:
                break
    return done
""",
        ),
        Answer(
            # Sin doble penalización: su pérdida del minilote está mal, pero
            # este ejercicio se califica con la de referencia en su lugar.
            "con una ppo_minibatch_loss mal escrita en la misma celda",
            """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    return ((values - batch.returns[indices]) ** 2).mean()

def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    epochs = 0
    for _ in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        epochs += 1
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            break
    return epochs
""",
        ),
    ],
    "quiz_1": [
        Answer("a mano", "answer_1 = 0.12"),
        Answer("la cuenta escrita", "answer_1 = (2 - 2.6) * (0 - 0.2)"),
        Answer("un tensor de un elemento", "answer_1 = torch.tensor(0.12)"),
        Answer("con tres decimales", "answer_1 = np.float32(0.120)"),
    ],
    "quiz_2": [
        Answer(
            "en otro orden",
            'answer_2 = {"d": True, "c": False, "b": False, "a": True}',
        ),
        Answer(
            "con booleanos de NumPy",
            "answer_2 = dict(zip('abcd', np.array([1, 0, 0, 1]) == 1))",
        ),
    ],
    "quiz_3": [
        Answer("con tres decimales", "answer_3 = -0.733"),
        Answer("la cuenta escrita", "answer_3 = (-2.6 + 1.2 - 0.8) / 3"),
        Answer(
            "con la función del ejercicio 1",
            """
answer_3 = -clipped_surrogate_loss(
    torch.log(torch.tensor([1.3, 1.5, 0.7])),
    torch.zeros(3),
    torch.tensor([-2.0, 1.0, -1.0]),
    0.2,
)
""",
        ),
    ],
    "quiz_4": [
        Answer(
            "en otro orden",
            'answer_4 = {"b": True, "a": False, "d": False, "c": True}',
        ),
        Answer(
            "con dict()",
            "answer_4 = dict(a=False, b=True, c=True, d=False)",
        ),
    ],
}


# ---------------------------------------------------------------------------
# Clases de error que valen para cualquier ejercicio (issue #22).
# ---------------------------------------------------------------------------

WRONG["clipped_surrogate_loss"] += [
    Answer(
        "redondea a dos decimales",
        """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp(log_probs - old_log_probs.detach())
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    loss = -torch.min(ratio * advantages, clipped * advantages).mean()
    return torch.round(loss, decimals=2)
""",
        mistake="rounded",
    ),
    Answer(
        "cambia el signo de las ventajas en su sitio",
        """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp(log_probs - old_log_probs.detach())
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    advantages *= -1
    return torch.max(ratio * advantages, clipped * advantages).mean()
""",
        mistake="modified_input",
    ),
    Answer(
        "cociente de exponenciales (se anula con log π ≈ −1000)",
        """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = log_probs.exp() / old_log_probs.detach().exp()
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean()
""",
        mistake="ratio_of_exponentials",
    ),
    Answer(
        "sin la exponencial",
        """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    log_ratio = log_probs - old_log_probs.detach()
    clipped = torch.clamp(log_ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(log_ratio * advantages, clipped * advantages).mean()
""",
        mistake="missing_exp",
    ),
]
WRONG["kl_estimators"] += [
    Answer(
        "calcula log ρ sobre la entrada",
        """
def kl_estimators(log_probs, other_log_probs):
    other_log_probs -= log_probs
    k1 = (-other_log_probs).mean()
    k3 = (torch.exp(other_log_probs) - 1 - other_log_probs).mean()
    return k1, k3
""",
        mistake="modified_input",
    ),
]

# ---------------------------------------------------------------------------
# Un error típico por cada fila que ninguna respuesta provocaba, y los pasos
# de la fase de actualización: minilotes seguidos, un paso por minilote
# (issue 48).
# ---------------------------------------------------------------------------

WRONG["clipped_surrogate_loss"] += [
    Answer(
        "devuelve un número con .item()",
        """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp(log_probs - old_log_probs.detach())
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean().item()
""",
        mistake="not_a_tensor",
    ),
    Answer(
        "el cociente invertido",
        """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp(old_log_probs.detach() - log_probs)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean()
""",
        mistake="inverted_ratio",
    ),
    Answer(
        "el cociente entero separado del grafo",
        """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp((log_probs - old_log_probs).detach())
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean()
""",
        mistake="no_gradient",
        fails=("clipped_surrogate_loss_test_grad",),
    ),
    Answer(
        "el término recortado separado del grafo",
        """
def clipped_surrogate_loss(log_probs, old_log_probs, advantages, clip_eps=0.2):
    ratio = torch.exp(log_probs - old_log_probs.detach())
    clipped = torch.clamp(ratio.detach(), 1 - clip_eps, 1 + clip_eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean()
""",
        mistake="clip_wrong_gradient",
        fails=("clipped_surrogate_loss_test_grad",),
    ),
]
WRONG["kl_estimators"] += [
    Answer(
        "el último término de k3 con el signo cambiado",
        """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    return (-log_rho).mean(), (torch.exp(log_rho) - 1 + log_rho).mean()
""",
        mistake="k3_last_term_sign",
    ),
    Answer(
        "devuelve también k2",
        """
def kl_estimators(log_probs, other_log_probs):
    log_rho = other_log_probs - log_probs
    k2 = (0.5 * log_rho**2).mean()
    return (-log_rho).mean(), k2, (torch.exp(log_rho) - 1 - log_rho).mean()
""",
        mistake="kl_not_a_pair",
    ),
]
WRONG["ppo_minibatch_loss"] += [
    Answer(
        "sin vf_coef",
        """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv, clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + value - ent_coef * dist.entropy().mean()
""",
        mistake="missing_vf_coef",
    ),
    Answer(
        "error absoluto en el crítico",
        """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv, clip_eps)
    value = (values - batch.returns[indices]).abs().mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
        mistake="absolute_value_error",
    ),
    Answer(
        "un ½ de más en el crítico, como en CleanRL",
        """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv, clip_eps)
    value = 0.5 * ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
        mistake="half_value_error",
    ),
    Answer(
        "la política bajo torch.no_grad(), como al muestrear",
        """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    with torch.no_grad():
        dist = agent.distribution(batch.obs[indices])
    values = agent.value(batch.obs[indices])
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                        batch.log_probs[indices], adv, clip_eps)
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
        mistake="actor_without_gradient",
        fails=("ppo_minibatch_loss_test_grad",),
    ),
    Answer(
        "todo bajo torch.no_grad()",
        """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    with torch.no_grad():
        logits, values = agent(batch.obs[indices])
        dist = torch.distributions.Categorical(logits=logits)
        adv = batch.advantages[indices]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        policy = ppo.clipped_surrogate_loss(dist.log_prob(batch.actions[indices]),
                                            batch.log_probs[indices], adv, clip_eps)
        value = ((values - batch.returns[indices]) ** 2).mean()
        return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
        mistake="loss_without_gradient",
        fails=("ppo_minibatch_loss_test_grad",),
    ),
    Answer(
        "todo en la celda, con el término recortado separado del grafo",
        """
def ppo_minibatch_loss(agent, batch, indices, clip_eps=0.2, vf_coef=0.5,
                       ent_coef=0.01):
    logits, values = agent(batch.obs[indices])
    dist = torch.distributions.Categorical(logits=logits)
    adv = batch.advantages[indices]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = torch.exp(dist.log_prob(batch.actions[indices]) - batch.log_probs[indices])
    clipped = torch.clamp(ratio.detach(), 1 - clip_eps, 1 + clip_eps)
    policy = -torch.min(ratio * adv, clipped * adv).mean()
    value = ((values - batch.returns[indices]) ** 2).mean()
    return policy + vf_coef * value - ent_coef * dist.entropy().mean()
""",
        mistake="minibatch_wrong_gradient",
        fails=("ppo_minibatch_loss_test_grad",),
    ),
]
WRONG["ppo_update"] += [
    Answer(
        "minilotes a saltos de la permutación",
        """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    n_minibatches = -(-len(batch) // minibatch_size)
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for k in range(n_minibatches):
            indices = order[k::n_minibatches]
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
        mistake="strided_minibatches",
    ),
    Answer(
        "un solo paso por época, acumulando los minilotes",
        """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        optimizer.zero_grad()
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            loss.backward()
        torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
        optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            return epoch + 1
    return n_epochs
""",
        mistake="one_step_per_epoch",
    ),
    Answer(
        "devuelve n_epochs aunque pare antes",
        """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None and ppo.batch_kl(agent, batch) > target_kl:
            break
    return n_epochs
""",
        mistake="returned_n_epochs",
        fails=("ppo_update_test_kl",),
    ),
    Answer(
        "la KL solo en el último minilote",
        """
def ppo_update(agent, optimizer, batch, generator, *, n_epochs, minibatch_size,
               clip_eps, vf_coef, ent_coef, max_grad_norm, target_kl=None):
    for epoch in range(n_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for indices in order.split(minibatch_size):
            loss = ppo_minibatch_loss(agent, batch, indices, clip_eps, vf_coef,
                                      ent_coef)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
        if target_kl is not None:
            with torch.no_grad():
                obs, actions = batch.obs[indices], batch.actions[indices]
                new = agent.distribution(obs).log_prob(actions)
                _, k3 = kl_estimators(batch.log_probs[indices], new)
            if k3 > target_kl:
                return epoch + 1
    return n_epochs
""",
        mistake="wrong_epoch_count",
        fails=("ppo_update_test_kl",),
    ),
]
WRONG["quiz_1"] += [
    Answer(
        "el gradiente entero, como tupla",
        "answer_1 = (0.12, -0.3, 0.18)",
        mistake="not_a_real_number",
    ),
    Answer(
        "contesta si recibe gradiente, no cuánto",
        "answer_1 = True",
        mistake="boolean_for_number",
    ),
]
