import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOllama } from '@langchain/ollama';
import { ChatOpenAI } from '@langchain/openai';
import { AppError, type ModelSettings } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';

const HOW_TO =
  'set LLM_PROVIDER (openai for any OpenAI-compatible endpoint such as vLLM, LM Studio or OpenRouter; anthropic; ollama), ' +
  'LLM_MODEL, and LLM_BASE_URL and/or LLM_API_KEY as the provider needs; runs of supplied or saved workflows need no model';

/** The settings in force: an agent's model settings over the service's LLM_* configuration. */
export function effectiveModel(config: AppConfig['llm'], overrides: ModelSettings = {}) {
  return {
    provider: overrides.provider ?? config.provider,
    model: overrides.model ?? config.model,
    temperature: overrides.temperature ?? config.temperature,
    maxTokens: overrides.maxTokens,
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    timeoutMs: config.timeoutMs,
  };
}

/**
 * A LangChain chat model from configuration, or `model_not_configured` (400) with a sentence on how
 * to configure one. Nothing is contacted here: a wrong URL or key shows on the first call.
 */
export function createChatModel(config: AppConfig['llm'], overrides: ModelSettings = {}): BaseChatModel {
  const m = effectiveModel(config, overrides);
  if (!m.provider || !m.model) {
    throw new AppError('model_not_configured', `no language model is configured: ${HOW_TO}`, {
      details: { missing: [...(!m.provider ? ['LLM_PROVIDER'] : []), ...(!m.model ? ['LLM_MODEL'] : [])] },
    });
  }
  switch (m.provider) {
    case 'openai':
      if (!m.apiKey && !m.baseUrl) {
        throw new AppError(
          'model_not_configured',
          `LLM_PROVIDER=openai needs LLM_API_KEY, or LLM_BASE_URL for a local OpenAI-compatible server: ${HOW_TO}`,
        );
      }
      return new ChatOpenAI({
        model: m.model,
        // Local OpenAI-compatible servers accept any key; the client insists on one.
        apiKey: m.apiKey ?? 'not-needed',
        timeout: m.timeoutMs,
        maxRetries: 2,
        ...(m.temperature !== undefined ? { temperature: m.temperature } : {}),
        ...(m.maxTokens !== undefined ? { maxTokens: m.maxTokens } : {}),
        ...(m.baseUrl ? { configuration: { baseURL: m.baseUrl } } : {}),
      });
    case 'anthropic':
      if (!m.apiKey)
        throw new AppError('model_not_configured', `LLM_PROVIDER=anthropic needs LLM_API_KEY: ${HOW_TO}`);
      return new ChatAnthropic({
        model: m.model,
        apiKey: m.apiKey,
        maxRetries: 2,
        ...(m.temperature !== undefined ? { temperature: m.temperature } : {}),
        ...(m.maxTokens !== undefined ? { maxTokens: m.maxTokens } : {}),
        ...(m.baseUrl ? { anthropicApiUrl: m.baseUrl } : {}),
      });
    case 'ollama':
      return new ChatOllama({
        model: m.model,
        ...(m.baseUrl ? { baseUrl: m.baseUrl } : {}),
        ...(m.temperature !== undefined ? { temperature: m.temperature } : {}),
      });
  }
}
