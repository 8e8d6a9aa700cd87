# flake8: noqa

# import apis into api package
from admin_service_client.api.api_keys_api import APIKeysApi
from admin_service_client.api.apps_api import AppsApi
from admin_service_client.api.audit_log_api import AuditLogApi
from admin_service_client.api.auth_api import AuthApi
from admin_service_client.api.chat_routing_api import ChatRoutingApi
from admin_service_client.api.contacts_api import ContactsApi
from admin_service_client.api.e_mail_analytics_api import EMailAnalyticsApi
from admin_service_client.api.e_mail_events_api import EMailEventsApi
from admin_service_client.api.e_mail_jobs_api import EMailJobsApi
from admin_service_client.api.e_mail_templates_api import EMailTemplatesApi
from admin_service_client.api.feedback_api import FeedbackApi
from admin_service_client.api.health_api import HealthApi
from admin_service_client.api.joinlist_api import JoinlistApi
from admin_service_client.api.magic_link_api import MagicLinkApi
from admin_service_client.api.newsletter_api import NewsletterApi
from admin_service_client.api.sender_domains_api import SenderDomainsApi
from admin_service_client.api.tickets_api import TicketsApi
from admin_service_client.api.tracking_api import TrackingApi
from admin_service_client.api.users_api import UsersApi
from admin_service_client.api.wants_api import WantsApi
from admin_service_client.api.webhooks_api import WebhooksApi

